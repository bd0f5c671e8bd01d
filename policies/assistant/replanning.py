"""Replanning in a COMPLEX turn: a plan step whose tool failed twice in a row may be replanned once;
the next failure of the work that replaced it (its third) skips it, and the answer says so.

The runtime assigns every tool run to a plan step (``reins.policies.assistant.answer_check.assign_plan_step``), so
"failed twice in a row" is read from the execution record, never from what the model says.

Once a step is skipped it counts as finished for the loop's end: when every other step is finished,
the loop ends and the answer is drafted (the model would otherwise go on retrying the skipped work
until the step limit).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_REPLANS = 1
FAILURES_BEFORE_REPLAN = 2

CONTINUE = "continue"
REPLAN = "replan"
SKIP = "skip"


@dataclass(frozen=True)
class RevisionDecision:
    action: str  # continue | replan | skip
    step: int | None = None


def trailing_failures(records: Sequence[Mapping[str, Any]]) -> tuple[int | None, int]:
    """(the step of the last run, how many runs in a row at the end of the record failed on it)."""
    if not records or records[-1].get("ok") or records[-1].get("step") is None:
        return None, 0
    step = records[-1]["step"]
    count = 0
    for record in reversed(records):
        if record.get("ok") or record.get("step") != step:
            break
        count += 1
    return step, count


def decide_revision(
    records: Sequence[Mapping[str, Any]],
    *,
    replans_used: int,
    replacement_steps: Collection[int] = (),
) -> RevisionDecision:
    """After a tool run: go on, replan the failing step, or skip it.

    A step that replaced a failed one is skipped at its first failure (the work's third); an
    original step is replanned after two failures in a row while the budget lasts, else skipped.
    """
    step, failures = trailing_failures(records)
    if step is None:
        return RevisionDecision(CONTINUE)
    if step in replacement_steps:
        return RevisionDecision(SKIP, step)
    if failures < FAILURES_BEFORE_REPLAN:
        return RevisionDecision(CONTINUE)
    return RevisionDecision(REPLAN if replans_used < MAX_REPLANS else SKIP, step)


def merge_replan(
    steps: Sequence[Mapping[str, Any]], done: Collection[int], new_steps: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[int]]:
    """The plan after a replan: the finished steps as they were, then the new steps numbered after
    the highest id so far (a run's recorded step keeps meaning what it meant). Returns the steps and
    the new ids."""
    kept = [dict(step) for step in steps if step["id"] in done]
    offset = max((int(step["id"]) for step in steps), default=0)
    added = [{**dict(step), "id": offset + i} for i, step in enumerate(new_steps, start=1)]
    return [*kept, *added], [step["id"] for step in added]


def active_steps(plan: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The plan steps still to be served: every step but the skipped ones."""
    if not plan:
        return []
    skipped = set(plan.get("skipped") or ())
    return [step for step in plan["steps"] if step["id"] not in skipped]


def plan_settled(plan: Mapping[str, Any] | None, records: Sequence[Mapping[str, Any]]) -> bool:
    """The loop has nothing left to do for a plan that skipped a step: every step is finished (a
    successful run served it) or skipped. A plan that skipped nothing leaves the end to the model,
    which may need a call its plan did not name."""
    if not plan or not plan.get("skipped"):
        return False
    done = {r.get("step") for r in records if r.get("ok") and r.get("step") is not None}
    return all(step["id"] in done for step in active_steps(plan))
