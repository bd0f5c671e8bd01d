"""Replanning rules: two failures in a row replan once; the replacement's failure (the third) skips."""

from __future__ import annotations

import pytest

from reins.policies.assistant.replanning import (
    CONTINUE,
    REPLAN,
    SKIP,
    decide_revision,
    merge_replan,
    plan_settled,
    trailing_failures,
)


def run(step, ok):
    return {"step": step, "ok": ok}


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([], (None, 0)),
        ([run(1, True)], (None, 0)),
        ([run(1, False)], (1, 1)),
        ([run(2, False), run(2, False)], (2, 2)),
        ([run(2, False), run(1, True), run(2, False)], (2, 1)),  # not in a row
        ([run(1, False), run(None, False)], (None, 0)),  # a run serving no step
    ],
)
def test_trailing_failures(records, expected):
    assert trailing_failures(records) == expected


@pytest.mark.parametrize(
    ("records", "replans", "replacements", "expected"),
    [
        ([run(1, True)], 0, (), (CONTINUE, None)),
        ([run(2, False)], 0, (), (CONTINUE, None)),
        ([run(2, False), run(2, False)], 0, (), (REPLAN, 2)),
        ([run(2, False), run(2, False)], 1, (), (SKIP, 2)),  # the one replan is used
        ([run(2, False), run(2, False), run(3, False)], 1, (3,), (SKIP, 3)),  # the third failure
        ([run(2, False), run(2, False), run(3, True)], 1, (3,), (CONTINUE, None)),
        ([run(2, False), run(1, True), run(2, False)], 0, (), (CONTINUE, None)),
    ],
)
def test_decide_revision(records, replans, replacements, expected):
    decision = decide_revision(records, replans_used=replans, replacement_steps=replacements)
    assert (decision.action, decision.step) == expected


def test_merge_replan_keeps_done_steps_and_numbers_new_ones_after_the_highest():
    steps = [{"id": 1, "tool": "a", "purpose": "p"}, {"id": 2, "tool": "b", "purpose": "q"}, {"id": 3, "tool": "c", "purpose": "r"}]
    merged, added = merge_replan(steps, {1}, [{"id": 1, "tool": "d", "purpose": "s"}, {"id": 2, "tool": "c", "purpose": "r"}])
    assert [(s["id"], s["tool"]) for s in merged] == [(1, "a"), (4, "d"), (5, "c")]
    assert added == [4, 5]


def _plan(*ids: int, skipped: tuple[int, ...] = ()) -> dict:
    return {"steps": [{"id": i, "tool": "t", "purpose": "p"} for i in ids], "skipped": list(skipped)}


@pytest.mark.parametrize(
    ("plan", "records", "settled"),
    [
        (_plan(1, 2, skipped=(2,)), [run(1, True), run(2, False)], True),  # the skipped step counts as finished
        (_plan(2, skipped=(2,)), [run(1, False), run(1, False), run(2, False)], True),  # only a skipped step is left
        (_plan(1, 3, skipped=(3,)), [run(3, False)], False),  # step 1 still to do
        (_plan(1, 3, skipped=(3,)), [run(1, False), run(3, False)], False),  # step 1 failed: still to do
        (_plan(1, 2), [run(1, True), run(2, True)], False),  # nothing skipped: the model says when it is done
        (_plan(1, 2), [run(1, True), run(2, False)], False),
        (None, [run(1, True)], False),
    ],
)
def test_a_skipped_step_counts_as_finished_for_the_end_of_the_loop(plan, records, settled):
    assert plan_settled(plan, records) is settled
