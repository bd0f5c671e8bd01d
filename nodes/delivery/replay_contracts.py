"""The contract outputs a delivery run kept, as replay re-validates them (``reins.policies.audit.contract_replay``).

A run's state holds each output the runtime accepted: the supervisor's pre-decision, the plan and
the tasks (or, once revised, their revision: a revision replaces the artifact, so the first output
is no longer there), and each completed review. Its ``contract_metrics`` say whether the output came
on the first answer or after the one repair. Each entry names where its decision falls in the run:

- ``start``: before the first manager turn (the pre-decision);
- a turn number: right after that manager turn (the worker it sent);
- ``reviews``: before the review status (the reviews it is built from);
- ``revision``: after the revision decision (the revised artifacts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reins.policies.audit.contract_replay import PRE_DECISION, elided, recorded_label
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS

# artifact kind → (the manager verdict that sends its worker, its first contract, its revision contract)
_WORK = {
    "plan": ("plan_worker", "delivery.plan", "delivery.plan_revision"),
    "tasks": ("task_worker", "delivery.tasks", "delivery.task_revision"),
}


def contract_outputs(values: Mapping[str, Any], *, compact: bool = False) -> list[dict[str, Any]]:
    """``{contract, at, recorded, value}`` per kept output, in the order the run made them
    (``compact``: long strings kept as their length and digest, for the evaluation's records)."""
    metrics = values.get("contract_metrics") or {}

    def entry(contract: str, at: str | int | None, value: Any) -> dict[str, Any]:
        return {"contract": contract, "at": at, "recorded": recorded_label(metrics, contract),
                "value": elided(value) if compact else value}

    outputs = []
    if values.get("pre_decision"):
        outputs.append(entry(PRE_DECISION, "start", values["pre_decision"]))
    proposals = values.get("manager_proposals") or []
    for kind, (sent_by, first, revised) in _WORK.items():
        record = values.get(kind)
        if not record:
            continue
        if record["revision"] > 1:
            outputs.append(entry(revised, "revision", record["value"]))
            continue
        turns = [p["turn"] for p in proposals if p["verdict"]["next"] == sent_by]
        outputs.append(entry(first, turns[-1] if turns else None, record["value"]))
    contracts = {spec.role: spec.contract for spec in DEFAULT_REVIEWERS}
    for outcome in values.get("review_outcomes") or []:
        if outcome["outcome"] == "completed" and outcome.get("review") and outcome["role"] in contracts:
            outputs.append(entry(contracts[outcome["role"]], "reviews", outcome["review"]))
    return outputs
