"""The worst-case budget: the arithmetic per stage, each graph's stages, and the caps (pure)."""

from __future__ import annotations

import pytest

from reins.policies.budget import Budget, CallLimits, Stage, budget, over_caps, request_refused, stage_budget, tightness
from reins.policies.run_budgets import assistant_stages, assistant_turns, delivery_stages, tasklist_stages

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
    assert _calls(assistant_stages(max_steps=3)) - _calls(assistant_stages(max_steps=10)) == -7


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
