"""The check → act budget: one round, only in a tool turn that ended on its own, inside the step budget."""

from __future__ import annotations

import pytest

from reins.policies.assistant.check_act import (
    LOOP_STOPPED,
    NO_STEPS_LEFT,
    NOT_A_TOOL_TURN,
    NOTHING_FOUND,
    ROUND_USED,
    UNFINISHED_STEP,
    UNSUPPORTED_CLAIM,
    UNSUPPORTED_NUMBER,
    check_findings,
    decide_check_act,
)

FOUND = [{"code": UNFINISHED_STEP, "where": "plan step 2"}]


@pytest.mark.parametrize(
    ("findings", "rounds", "intent", "stop", "steps", "limit", "act", "reason"),
    [
        (FOUND, 0, "COMPLEX", None, 1, 10, True, None),
        (FOUND, 0, "SIMPLE_TOOL", None, 0, 1, True, None),  # the one call was never made
        ([], 0, "COMPLEX", None, 1, 10, False, NOTHING_FOUND),
        (FOUND, 1, "COMPLEX", None, 1, 10, False, ROUND_USED),  # the second failure caps
        (FOUND, 0, "QA", None, 0, 10, False, NOT_A_TOOL_TURN),
        (FOUND, 0, None, None, 0, 10, False, NOT_A_TOOL_TURN),
        (FOUND, 0, "COMPLEX", "stalled", 3, 10, False, LOOP_STOPPED),
        (FOUND, 0, "COMPLEX", "model_error", 3, 10, False, LOOP_STOPPED),
        (FOUND, 0, "COMPLEX", None, 10, 10, False, NO_STEPS_LEFT),
        (FOUND, 0, "SIMPLE_TOOL", None, 1, 1, False, NO_STEPS_LEFT),
    ],
)
def test_decide_check_act(findings, rounds, intent, stop, steps, limit, act, reason):
    decision = decide_check_act(findings, rounds_used=rounds, intent=intent, stop_reason=stop, steps_taken=steps,
                                max_steps=limit)
    assert (decision.allowed, decision.code or None) == (act, reason)


@pytest.mark.parametrize(
    ("unfinished", "claims", "numbers", "expected"),
    [
        ((), (), False, []),
        ((2, 3), (), False, [{"code": UNFINISHED_STEP, "where": "plan step 2"}, {"code": UNFINISHED_STEP, "where": "plan step 3"}]),
        ((), (("summary", "calculator"), ("summary", "calculator"), ("evidence[1]", "clock")), False,
         [{"code": UNSUPPORTED_CLAIM, "where": "summary (calculator)"}, {"code": UNSUPPORTED_CLAIM, "where": "evidence[1] (clock)"}]),
        ((), (), True, [{"code": UNSUPPORTED_NUMBER, "where": "summary"}]),
        (tuple(range(1, 15)), (), False, [{"code": UNFINISHED_STEP, "where": f"plan step {i}"} for i in range(1, 11)]),
    ],
)
def test_check_findings_are_code_and_place_only(unfinished, claims, numbers, expected):
    assert check_findings(unfinished, claims, numbers) == expected
