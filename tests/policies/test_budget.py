"""The worst-case budget: the arithmetic per stage, each graph's stages, and the caps (pure)."""

from __future__ import annotations

import pytest

from reins.policies.audit.budget import (
    Budget,
    CallLimits,
    Stage,
    budget,
    cap_value,
    most,
    over_caps,
    request_refused,
    stage_budget,
    tightness,
    tool_time_s,
    total,
    widest,
)
from reins.policies.audit.run_budgets import (
    ASSISTANT_ASKS,
    assistant_stages,
    assistant_turns,
    delivery_stages,
    pipeline_turn_stages,
    tasklist_stages,
)

CHAT = dict.fromkeys(ASSISTANT_ASKS, "chat")
# the contracts' table as the assistant's task roles serve them
TASK_ROLES = {"summary": "classify", "intent": "classify", "step": "step", "replan": "step", "answer": "answer",
              "reflection": "check", "skill_draft": "answer"}

ONE = CallLimits(models=1, attempts=1, max_tokens=100, max_tokens_limit=400, timeout_s=10, backoff_initial_s=0)
RETRYING = CallLimits(models=2, attempts=2, max_tokens=100, max_tokens_limit=150, timeout_s=10, backoff_initial_s=1)


@pytest.mark.parametrize(
    ("stage", "limits", "expected"),
    [
        # a contract: the call and its repair (the repair with twice the bound)
        (Stage("c", "r", "contract"), ONE, Budget(2, 100 + 200, 0, 20)),
        # a free-text draft: the same two asks
        (Stage("t", "r", "text"), ONE, Budget(2, 300, 0, 20)),
        # a turn: one ask; two of three turns re-asked with more room
        (Stage("m", "r", "turn", 3, more_room=2), ONE, Budget(3, 100 + 2 * 200, 0, 30)),
        # 2 models × 2 attempts per ask; the repair's bound capped at the limit (150); backoff 1·2⁰ + 1 jitter
        (Stage("c", "r", "contract"), RETRYING, Budget(8, 4 * 100 + 4 * 150, 0, 2 * 2 * (2 * 10 + 2))),
        # parallel asks: the calls add up, the wall time is one ask's
        (Stage("p", "r", "contract", 3, parallel=True), ONE, Budget(6, 900, 0, 20)),
        # a deadline caps each ask's wall time
        (Stage("p", "r", "contract", 3, parallel=True, deadline_s=5), ONE, Budget(6, 900, 0, 5)),
        (Stage("s", "r", "contract", 3, deadline_s=5), ONE, Budget(6, 900, 0, 15)),
    ],
)
def test_stage_budget(stage, limits, expected):
    assert stage_budget(stage, limits) == expected


def test_budget_adds_stages_and_tools_and_refuses_an_unknown_role():
    worst = budget([Stage("a", "r", "contract"), Stage("b", "r", "turn", 2)], {"r": ONE}, tool_calls=4, tool_seconds=8)
    assert worst == Budget(4, 300 + 200, 4, 20 + 20 + 8)
    with pytest.raises(ValueError, match="no call limits for role 'x'"):
        budget([Stage("a", "x", "turn")], {"r": ONE})


def _calls(stages):
    return sum(stage.count * (1 if stage.kind == "turn" else 2) for stage in stages)


@pytest.mark.parametrize(
    ("reasks", "reviewers", "two_step", "polish", "calls"),
    [
        # pre 2 + manager 3 + plan 2 + tasks 2 + reviews 3×2 + post 2 + revisions 2×2
        (0, 3, False, False, 2 + 3 + 2 + 2 + 6 + 2 + 4),
        (1, 3, False, False, 2 + 6 + 2 + 2 + 6 + 2 + 4),
        (2, 3, False, False, 2 + 9 + 2 + 2 + 6 + 2 + 4),
        (1, 4, False, False, 2 + 6 + 2 + 2 + 8 + 2 + 4),
        (1, 3, False, True, 2 + 6 + 2 + 2 + 6 + 2 + 4 + 2),
        # two_step: every contract is a draft and its encoding (twice the asks)
        (1, 3, True, False, 4 + 6 + 4 + 4 + 12 + 4 + 8),
    ],
)
def test_delivery_stages_follow_the_rules_that_bound_the_chain(reasks, reviewers, two_step, polish, calls):
    stages = delivery_stages(["reviewer"] * reviewers, max_manager_reasks=reasks, two_step=two_step, polish=polish)
    assert _calls(stages) == calls
    manager = next(s for s in stages if s.name == "manager")
    assert manager.more_room == 3 * reasks  # each phase's re-asks may be after a cut-off
    assert all(s.parallel for s in stages if s.name.startswith("review:"))


def test_reviewers_on_their_own_roles_are_budgeted_per_role():
    stages = delivery_stages(["reviewer", "reviewer", "privacy"], max_manager_reasks=1)
    reviews = {s.role: s.count for s in stages if s.name.startswith("review:")}
    assert reviews == {"reviewer": 2, "privacy": 1}


@pytest.mark.parametrize(("human_review", "calls"), [(False, 2 + 2 + 2 + 2), (True, 2 + 4 + 2 + 2)])
def test_tasklist_stages(human_review, calls):
    assert _calls(tasklist_stages(human_review=human_review)) == calls


def test_assistant_stages_follow_the_step_budget():
    assert assistant_turns(10) == 12 and assistant_turns(3) == 5
    assert _calls(assistant_stages(CHAT, max_steps=3)) - _calls(assistant_stages(CHAT, max_steps=10)) == -7


def test_each_ask_of_a_chat_turn_is_budgeted_on_its_own_role():
    stages = assistant_stages(TASK_ROLES)
    assert {s.name: s.role for s in stages} == TASK_ROLES
    # the step role's chain of four models: every tool-calling turn and each replan ask may use all of it
    four = CallLimits(models=4, attempts=2, max_tokens=100, max_tokens_limit=200, timeout_s=10, backoff_initial_s=0)
    limits = {role: ONE for role in set(TASK_ROLES.values())}
    plain, stepped = budget(stages, limits), budget(stages, {**limits, "step": four})
    step_asks = assistant_turns() + 2  # the turns, the replan and its repair
    assert stepped.calls - plain.calls == step_asks * (4 * 2 - 1)
    with pytest.raises(KeyError):
        assistant_stages({"step": "step"})  # an ask without a role is an error, never the chat role's


def test_a_pipeline_turn_is_the_turn_s_summary_and_the_whole_pipeline():
    pipeline = delivery_stages(["reviewer"] * 3, max_manager_reasks=1)
    stages = pipeline_turn_stages(TASK_ROLES, pipeline)
    assert [s.name for s in stages] == ["summary", *(s.name for s in pipeline)]
    assert stages[0].role == "classify" and _calls(stages) == 2 + _calls(pipeline)


@pytest.mark.parametrize(
    ("parts", "added", "largest"),
    [
        ([Budget(1, 10, 0, 5.0)], Budget(1, 10, 0, 5.0), Budget(1, 10, 0, 5.0)),
        # a chat turn with many tool calls against a pipeline with many model calls: each measure's largest
        ([Budget(52, 100, 20, 3000.0), Budget(60, 300, 5, 6000.0)], Budget(112, 400, 25, 9000.0),
         Budget(60, 300, 20, 6000.0)),
    ],
)
def test_total_and_most(parts, added, largest):
    assert total(parts) == added and most(parts) == largest


def test_most_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        most([])


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (ONE, ONE, ONE),
        # each field its largest: 2 models, 2 attempts, the larger bound, limit, timeout and backoff
        (ONE, RETRYING, CallLimits(2, 2, 100, 400, 10, 1)),
        (CallLimits(1, 3, 50, 60, 90, 0, 2), RETRYING, CallLimits(2, 3, 100, 150, 90, 1, 2)),
    ],
)
def test_widest_limits_cost_at_least_either(first, second, expected):
    wide = widest(first, second)
    assert wide == expected
    for stage in (Stage("c", "r", "contract"), Stage("t", "r", "turn", 3, more_room=1)):
        for limits in (first, second):
            narrow, broad = stage_budget(stage, limits), stage_budget(stage, wide)
            assert narrow.calls <= broad.calls and narrow.output_tokens <= broad.output_tokens
            assert narrow.seconds <= broad.seconds


@pytest.mark.parametrize(
    ("calls", "deadlines", "seconds"),
    [
        (20, [30.0], 600.0),
        (20, [30.0, 600.0, 5.0], 12000.0),  # a slow MCP server's deadline, not the built-ins'
        (0, [600.0], 0.0),
        (3, [], 0.0),  # no tool offered
    ],
)
def test_tool_time_runs_every_call_to_the_longest_deadline(calls, deadlines, seconds):
    assert tool_time_s(calls, deadlines) == seconds


@pytest.mark.parametrize(
    ("text", "value"),
    [("10", 10.0), (" 2.5 ", 2.5), ("1e3", 1000.0), ("nan", None), ("NaN", None), ("inf", None), ("-inf", None),
     ("Infinity", None), ("1e400", None), ("0", None), ("0.0", None), ("-0", None), ("-1", None), ("", None),
     ("ten", None)],
)
def test_a_cap_is_a_finite_number_above_zero(text, value):
    if value is None:
        with pytest.raises(ValueError, match=r"^REINS_MAX_SECONDS must be a finite positive number, not '") as caught:
            cap_value("REINS_MAX_SECONDS", text)
        assert "\n" not in str(caught.value)
    else:
        assert cap_value("REINS_MAX_SECONDS", text) == value


@pytest.mark.parametrize(
    ("caps", "over"),
    [
        ({}, []),
        ({"calls": 10}, []),
        ({"calls": 9}, ["calls: 10 > 9"]),
        ({"calls": 9, "seconds": 100, "output_tokens": 1}, ["calls: 10 > 9", "output_tokens: 50 > 1"]),
    ],
)
def test_over_caps(caps, over):
    assert over_caps(Budget(10, 50, 2, 30.0), caps) == over


ONE_CALL = {"calls": 1, "output_tokens": 100, "seconds": 10}


@pytest.mark.parametrize(
    ("used", "held", "asked", "caps", "refused"),
    [
        ({"calls": 3}, {}, ONE_CALL, {"calls": 4}, None),  # the fourth call fits
        ({"calls": 4}, {}, ONE_CALL, {"calls": 4}, "calls"),  # a fifth would pass the cap
        ({"calls": 2}, {"calls": 2}, ONE_CALL, {"calls": 4}, "calls"),  # two in flight hold the rest
        # the output bound counts before the call: 850 spent + 100 at most > 900
        ({"calls": 1, "output_tokens": 850}, {}, ONE_CALL, {"output_tokens": 900}, "output_tokens"),
        ({"output_tokens": 700}, {"output_tokens": 100}, ONE_CALL, {"output_tokens": 900}, None),
        ({"seconds": 95}, {}, ONE_CALL, {"seconds": 100}, "seconds"),  # its timeout would end past the cap
        ({"tool_calls": 2}, {}, {"tool_calls": 1}, {"calls": 1, "tool_calls": 2}, "tool_calls"),
        ({"calls": 5}, {}, ONE_CALL, {}, None),  # no caps: never refused
        ({}, {}, ONE_CALL, {"calls": 4, "output_tokens": 50}, "output_tokens"),  # the first cap passed is named
    ],
)
def test_request_refused(used, held, asked, caps, refused):
    assert request_refused(used, held, asked, caps) == refused


def test_tightness_is_observed_over_bound():
    assert tightness({"calls": 5, "output_tokens": 0}, Budget(10, 50, 2, 30.0)) == {"calls": 0.5, "output_tokens": 0.0}
