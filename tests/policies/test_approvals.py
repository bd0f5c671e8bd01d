"""policies/tools/approvals.py: a decision is bound to its call, checked before it is stored, taken once,
and after a possible earlier run only an explicit choice acts."""

from __future__ import annotations

import pytest

from reins.policies.tools.approvals import (
    Claim,
    already_taken,
    call_fingerprint,
    claim_kind,
    decide_dispatch,
    from_middleware_shape,
    next_attempt,
    open_claim,
    read_any,
    refusal,
    stale_problem,
    value_problem,
)

FP = call_fingerprint("notes__add_note", {"text": "milk"})
RUN = Claim(1, "run", "a", "2026-12-04T10:00:00+00:00", "notes__add_note", {"text": "milk"})


def _deep(levels):
    value = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def test_the_fingerprint_is_the_policy_the_tool_and_the_canonical_arguments():
    assert call_fingerprint("t", {"a": 1, "b": [1, 2]}) == call_fingerprint("t", {"b": [1, 2], "a": 1})  # key order
    assert len({call_fingerprint("t", {"a": 1}), call_fingerprint("t", {"a": 2}), call_fingerprint("u", {"a": 1}),
                call_fingerprint("t", {"a": 1}, policy="other")}) == 4


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"type": "approve"}, ""),
        (_deep(31), ""),
        (_deep(33), "the decision is nested deeper than 32 levels"),
        (_deep(5000), "the decision is nested deeper than 32 levels"),
        ({"type": "approve", "note": "x" * 199_000}, ""),
        ({"type": "approve", "note": "x" * 2_000_000}, "the decision is larger than 200000 characters"),
        (["x" * 1000] * 300, "the decision is larger than 200000 characters"),
    ],
)
def test_value_limits(value, problem):
    assert value_problem(value) == problem


@pytest.mark.parametrize(
    ("value", "kind", "problem"),
    [
        ({"type": "approve"}, "approve", ""),
        ({"type": "approve", "fingerprint": FP}, "approve", ""),
        ({"type": "approve", "fingerprint": "0" * 16}, "", "stale decision: it is for call 0000000000000000"),
        ({"type": ["approve"]}, "", "decision type must be approve, reject or edit: {\"type\": \"approve\"}"),
        ({"type": "maybe"}, "", "decision type must be approve, reject or edit"),
        ("approve", "", "a decision is a JSON object"),
        ({"type": "reject", "reason": "no"}, "reject", ""),
        ({"type": "edit", "args": {"text": "oat"}}, "edit", ""),
        ({"type": "edit", "args": "oat"}, "", "an edit needs args"),
        ({"type": "run_again"}, "run_again", ""),
        ({"type": "skip", "why": 1}, "", "the call may already have run: answer"),
        # LangChain's HumanInTheLoopMiddleware shape
        ({"decisions": [{"type": "approve"}]}, "approve", ""),
        ({"decisions": [{"type": "reject", "message": "not now"}]}, "reject", ""),
        ({"decisions": [{"type": "edit", "edited_action": {"name": "notes__add_note", "args": {"text": "o"}}}]},
         "edit", ""),
        ({"decisions": [{"type": "edit", "edited_action": {"name": "other", "args": {}}}]}, "",
         "an edit may change the arguments, not the tool"),
        ({"decisions": [{"type": "approve"}, {"type": "approve"}]}, "", "decisions must hold exactly one decision"),
        ({"decisions": [{"type": "approve"}], "fingerprint": "1" * 16}, "", "stale decision"),
        (_deep(5000), "", "the decision is nested deeper than 32 levels"),
    ],
)
def test_read_any(value, kind, problem):
    decision = read_any(value, FP, "notes__add_note")
    assert decision.kind == kind
    assert decision.problem.startswith(problem) if problem else decision.valid


def test_the_middleware_shape_carries_its_reason_and_edited_arguments():
    assert from_middleware_shape({"decisions": [{"type": "reject", "message": "later"}]}) == (
        {"type": "reject", "reason": "later"}, "")
    edit = {"decisions": [{"type": "edit", "edited_action": {"name": "t", "args": {"a": 1}}}]}
    assert from_middleware_shape(edit, "t") == ({"type": "edit", "args": {"a": 1}}, "")
    assert read_any(edit, call_fingerprint("t", {}), "t").args == {"a": 1}
    assert from_middleware_shape({"type": "approve"}) == ({"type": "approve"}, "")  # Reins' own shape unchanged


@pytest.mark.parametrize(
    ("kind", "claims", "outcome"),
    [
        ("approve", [], "run"),
        ("edit", [], "run"),
        ("reject", [], "run"),
        ("run_again", [], "refuse"),  # nothing was dispatched: nothing to run again
        ("approve", [RUN], "refuse"),  # taken by another resume, or its run died: never an implicit repeat
        ("reject", [RUN], "refuse"),
        ("run_again", [RUN], "recover"),
        ("mark_done", [RUN], "recover"),
        ("skip", [RUN], "recover"),
    ],
)
def test_decide_dispatch(kind, claims, outcome):
    assert decide_dispatch(kind, claims) == outcome


def test_claims_count_attempts_and_the_refusal_says_when_and_what_to_answer():
    second = Claim(2, "run", "b", "2026-12-04T11:00:00+00:00")
    assert open_claim([RUN, second]) is second and open_claim([]) is None
    assert next_attempt([]) == 1 and next_attempt([RUN, second]) == 3
    assert [claim_kind(k) for k in ("approve", "edit", "run_again", "reject", "mark_done", "skip")] == [
        "run", "run", "run", "reject", "mark_done", "skip"]
    line = refusal("approve", [RUN], "notes__add_note")
    assert line == already_taken("notes__add_note", RUN) and "\n" not in line
    assert line.startswith("the decision on notes__add_note was already taken (dispatched at 2026-12-04T10:00:00")
    assert '{"type": "run_again"}' in line and '{"type": "skip"}' in line
    assert refusal("run_again", [], "t") == "the call has not been dispatched: answer approve, reject or edit"
    assert refusal("approve", [], "t") == ""
    assert stale_problem({"type": "approve"}, FP) == "" and stale_problem("x", FP) == ""
