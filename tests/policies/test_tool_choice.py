"""Tool-choice styles: what a manager turn and function_calling structured output ask for."""

import pytest

from reins.policies.models.tool_choice import structured_tool_choice, tool_turn_options

PLAN = ("plan-subagent",)
REVIEW = ("review-subagent", "risk-subagent", "boundary-subagent")


@pytest.mark.parametrize(
    ("offered", "style", "parallel", "expected"),
    [
        (PLAN, "required", False, {"tool_choice": "required", "parallel_tool_calls": False}),
        (PLAN, "named", False, {"tool_choice": "plan-subagent", "parallel_tool_calls": False}),
        (PLAN, "auto", False, {"tool_choice": "auto", "parallel_tool_calls": False}),
        (REVIEW, "required", True, {"tool_choice": "required", "parallel_tool_calls": True}),
        (REVIEW, "named", True, {"tool_choice": "required", "parallel_tool_calls": True}),  # three cannot be named
        (REVIEW, "auto", True, {"tool_choice": "auto", "parallel_tool_calls": True}),
        (PLAN, "required", True, {"tool_choice": "required", "parallel_tool_calls": False}),  # one tool: one call
        (REVIEW, "required", False, {"tool_choice": "required", "parallel_tool_calls": False}),
    ],
)
def test_tool_turn_options(offered, style, parallel, expected):
    assert tool_turn_options(offered, style, parallel=parallel) == expected


@pytest.mark.parametrize(("style", "expected"), [("required", "required"), ("auto", "auto"), ("named", None)])
def test_structured_tool_choice(style, expected):
    assert structured_tool_choice(style) == expected


@pytest.mark.parametrize("call", [lambda: tool_turn_options(PLAN, "any", parallel=False),
                                  lambda: tool_turn_options((), "required", parallel=False),
                                  lambda: structured_tool_choice("force")])
def test_unknown_style_or_no_tool_is_refused(call):
    with pytest.raises(ValueError):
        call()
