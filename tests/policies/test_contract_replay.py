"""Contract acceptance re-decided: a kept output validated again by its strict schema under the
current or a changed limit; the limit comes from the schema's own declaration; a compact (elided)
output validates exactly as the original."""

from __future__ import annotations

from typing import Any

import pytest
from annotated_types import MaxLen

from reins.policies.audit.contract_replay import (
    ACCEPTED,
    REPAIRED,
    after_rejection,
    declared_bound,
    elided,
    restored,
    revalidate,
)
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers
from reins.schemas.delivery import DeliveryTasks
from reins.schemas.tasklist import EXAMPLE_STRATEGY

LONG = "a target area described at more length than a compact record keeps"


def task(task_id: str, depends: tuple[str, ...] = (), area: str = "web UI") -> dict[str, Any]:
    return {"task_id": task_id, "title": f"Do {task_id}", "target_area": area, "acceptance_criteria": ["it works"],
            "requirement_refs": ["R1"], "depends_on_task_ids": list(depends)}


def tasks(*items: dict[str, Any], summary: str = "three tasks") -> dict[str, Any]:
    return {"summary": summary, "markdown": "# Tasks\n" + "- a task\n" * 40, "tasks": list(items)}


THREE = tasks(task("T-a"), task("T-b", ("T-a",)), task("T-c", ("T-b",), area=LONG))
PROCEED = {"decision": {"type": "proceed_to_tasklist_strategy", "reason": "ready"}, "strategy": EXAMPLE_STRATEGY}
LONG_KEYS = tasks(task("T-" + "k" * 50), task("T-" + "j" * 50, ("T-" + "k" * 50,)))

# name: (contract, value, recorded, --set limits, the label replay gives)
CASES = {
    "accepted again": ("delivery.tasks", THREE, ACCEPTED, (), ACCEPTED),
    "a repaired output stays repaired": ("delivery.tasks", THREE, REPAIRED, (), REPAIRED),
    "the bound lowered below the list": ("delivery.tasks", THREE, ACCEPTED, (("delivery.tasks", "tasks", 2),),
                                         "rejected (too_long at tasks)"),
    "the bound lowered to the list": ("delivery.tasks", THREE, ACCEPTED, (("delivery.tasks", "tasks", 3),), ACCEPTED),
    "a text bound (characters)": ("delivery.tasks", THREE, ACCEPTED, (("delivery.tasks", "summary", 5),),
                                  "rejected (string_too_long at summary)"),
    "the limit binds the schema's other contract": ("delivery.task_revision", THREE, REPAIRED,
                                                    (("delivery.tasks", "tasks", 2),), "rejected (too_long at tasks)"),
    "another schema's limit does not": ("delivery.tasks", THREE, ACCEPTED, (("delivery.plan", "summary", 1),), ACCEPTED),
    "a loosened bound keeps the cross-field rules": (
        "delivery.tasks", tasks(task("T-a"), task("T-a")), ACCEPTED, (("delivery.tasks", "tasks", 100),),
        "rejected (duplicate_key at tasks.1.task_id)"),
    "a cycle is still rejected": ("delivery.tasks", tasks(task("T-a", ("T-b",)), task("T-b", ("T-a",))), ACCEPTED, (),
                                  "rejected (dependency_cycle at tasks)"),
    "an unknown field": ("delivery.tasks", {**THREE, "extra": 1}, ACCEPTED, (), "rejected (extra_forbidden at extra)"),
    "no such contract": ("delivery.nope", THREE, ACCEPTED, (), "rejected (unknown_contract at $)"),
    "a strategy limit binds a planning decision's strategy": (
        "tasklist.planning_decision", PROCEED, ACCEPTED, (("tasklist.strategy", "grouping", 2),),
        "rejected (too_long at strategy.grouping)"),
    "which fits it when short enough": ("tasklist.planning_decision", PROCEED, REPAIRED,
                                        (("tasklist.strategy", "grouping", 3),), REPAIRED),
    "the strategy contract itself": ("tasklist.strategy", EXAMPLE_STRATEGY, ACCEPTED,
                                     (("tasklist.strategy", "grouping", 2),), "rejected (too_long at grouping)"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_kept_output_is_labelled_as_the_schema_and_limits_decide(name):
    contract, value, recorded, limits, label = CASES[name]
    assert revalidate(contract, value, recorded, limits) == label
    # a compact record (long strings kept as length and digest) is decided the same way
    assert revalidate(contract, elided(value), recorded, limits) == label


def test_the_bound_replay_changes_is_the_one_the_schema_declares():
    declared = next(m.max_length for m in DeliveryTasks.model_fields["tasks"].metadata if isinstance(m, MaxLen))
    assert declared_bound("delivery.tasks", "tasks") == declared
    assert declared_bound("delivery.tasks", "task_id") is None  # not a top-level field
    forty = tasks(*(task(f"T-{i}") for i in range(declared)))
    assert revalidate("delivery.tasks", forty, ACCEPTED) == ACCEPTED
    assert revalidate("delivery.tasks", tasks(*(task(f"T-{i}") for i in range(declared + 1))), ACCEPTED) == \
        "rejected (too_long at tasks)"


def test_elision_keeps_lengths_and_equality():
    compact = elided(LONG_KEYS)
    assert compact["tasks"][0]["task_id"]["chars"] == 52 and compact["tasks"][0]["target_area"] == "web UI"
    back = restored(compact)
    assert [len(t["task_id"]) for t in back["tasks"]] == [52, 52]
    assert back["tasks"][0]["task_id"] != back["tasks"][1]["task_id"]
    assert back["tasks"][1]["depends_on_task_ids"] == [back["tasks"][0]["task_id"]]
    assert revalidate("delivery.tasks", compact, ACCEPTED) == ACCEPTED
    assert restored(elided("short")) == "short" and restored({"chars": 3}) == {"chars": 3}


def test_the_pre_decision_schema_follows_the_reviewer_table():
    pre = {"branch": "execute", "assumptions": ["a"], "planning_focus": "p", "task_focus": "t",
           "review_focus": {"general": "g", "risk": "r", "boundary": "b"},
           "reviewer_roles": ["general", "risk", "boundary"],
           "stage_intents": [{"stage": s, "objective": "o"} for s in ("plan", "tasks", "review")]}
    assert revalidate("delivery.supervisor_pre", pre, ACCEPTED) == ACCEPTED
    two = Reviewers(tuple(spec for spec in DEFAULT_REVIEWERS if spec.role != "boundary"))
    assert revalidate("delivery.supervisor_pre", pre, ACCEPTED, reviewers=two) == \
        "rejected (extra_forbidden at review_focus.boundary)"


@pytest.mark.parametrize(("recorded", "says"), [
    (ACCEPTED, "needs a new model call: the repair of delivery.tasks"),
    (REPAIRED, "the repair of delivery.tasks was spent, so the contract fails unless its role's escalation model answers"),
])
def test_a_rejection_says_what_would_follow(recorded, says):
    assert says in after_rejection("delivery.tasks", recorded)


@pytest.mark.parametrize(("metrics", "label"), [
    (None, "accepted"),
    ({}, "accepted"),
    ({"delivery.plan": {"repair_calls": 0}}, "accepted"),
    ({"delivery.plan": {"repair_calls": 1}}, "repaired"),
    ({"delivery.tasks": {"repair_calls": 1}}, "accepted"),  # another contract's repair is not this one's
])
def test_the_recorded_label_reads_the_contracts_own_repairs(metrics, label):
    from reins.policies.audit.contract_replay import recorded_label

    assert recorded_label(metrics, "delivery.plan") == label
