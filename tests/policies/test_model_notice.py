"""What a run says about its models, and which roles changed model before a resume."""

from __future__ import annotations

import pytest

from reins.policies.models.model_notice import fallback_warnings, model_changes, models_line


@pytest.mark.parametrize(
    ("models", "expected"),
    [
        ({}, ""),
        ({"planner": ["openai-compatible:a"]}, "planner: openai-compatible:a"),
        ({"planner": ["a"], "reviewer": ["a", "b"], "chat": []}, "planner: a; reviewer: a, b"),
    ],
)
def test_models_line_names_every_role_that_answered(models, expected):
    assert models_line(models) == expected


@pytest.mark.parametrize(
    ("started", "now", "expected"),
    [
        ({"planner": "a"}, {"planner": "a"}, []),
        ({"planner": "a"}, {"planner": "offline"}, ["planner"]),
        ({"planner": "a", "chat": "b"}, {"planner": "a", "chat": "b → c"}, ["chat"]),
        ({"planner": "a"}, {"planner": "a", "reviewer": "x"}, ["reviewer"]),
        ({}, {"planner": "a"}, []),  # a run from before the configuration was recorded
    ],
)
def test_model_changes_lists_the_roles_that_differ(started, now, expected):
    assert model_changes(started, now) == expected


@pytest.mark.parametrize(
    ("models", "primaries", "line"),
    [
        ({"planner": ["a"]}, None, "planner: a"),
        ({"planner": ["a"]}, {"planner": "a"}, "planner: a"),
        ({"planner": ["b"]}, {"planner": "a"}, "planner: b (fallback)"),  # only the fallback answered
        ({"planner": ["a", "b"], "chat": ["a"]}, {"planner": "a", "chat": "a"}, "planner: a, b (fallback); chat: a"),
        ({"reviewer": ["b"]}, {"planner": "a"}, "reviewer: b"),  # no primary known: nothing marked
    ],
)
def test_the_models_line_marks_fallbacks(models, primaries, line):
    assert models_line(models, primaries=primaries) == line


@pytest.mark.parametrize(
    ("fallbacks", "primaries", "warnings"),
    [
        ({}, None, []),
        ({"planner": 0}, None, []),
        ({"planner": 2}, {"planner": "openai-compatible:qwen"},
         ["planner: 2 call(s) answered by a fallback model; the primary openai-compatible:qwen failed or was not there"]),
        ({"chat": 1}, None, ["chat: 1 call(s) answered by a fallback model; the primary failed or was not there"]),
    ],
)
def test_each_role_that_fell_back_gets_a_warning(fallbacks, primaries, warnings):
    assert fallback_warnings(fallbacks, primaries) == warnings


@pytest.mark.parametrize(
    ("started", "now", "line"),
    [
        ({"chat": "gpt-x", "planner": "gpt-x"}, {"chat": "gpt-x", "planner": "gpt-x"}, ""),
        ({"chat": "gpt-x"}, {"chat": "offline"}, "chat: started on gpt-x, now offline"),
        ({"chat": "a", "planner": "b"}, {"chat": "c", "planner": "b", "vision": "d"},
         "chat: started on a, now c; vision: started on none, now d"),
        ({}, {"chat": "offline"}, ""),  # a run that recorded no models: nothing to compare
    ],
)
def test_model_switch_names_both_models_of_each_changed_role(started, now, line):
    from reins.policies.models.model_notice import model_switch

    assert model_switch(started, now) == line
