"""A tasklist run re-decided by its state machine under changed limits (pure).

Every step asks ``guard(machine, proposal)`` before it acts; the run records each question and
answer in ``guard_log`` (``guard_record``): the machine as the guard saw it, the proposal (action,
resource, the model's planning choice) and the verdict. Replay asks the guard again with the
changed limits (``tasklist.<limit>=N``). Routing reads no limit, so the recorded action is the one
the run would have taken; a step the guard now refuses ends the run in ``stopped`` (rules alone), a
step it now allows that was refused would need new model calls from there. The contract outputs
the run kept (the planning decision, a generated strategy) are validated again right after the guard
question of the step that made them (``reins.policies.audit.contract_replay``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from reins.policies.audit.contract_replay import after_rejection, revalidate
from reins.policies.audit.replay import DEFAULT_OVERRIDES, Decision, Overrides, Replay
from reins.policies.tasklist.machine import Counters, Limits, Machine, Proposal, StepVerdict, guard

REFUSED_STATUS = "stopped"  # where a refused step leaves a run


def guard_record(machine: Machine, proposal: Proposal, verdict: StepVerdict) -> dict[str, Any]:
    """One guard question and answer as plain data (checkpoint-safe)."""
    snapshot = asdict(machine)
    snapshot["allowed_actions"] = list(machine.allowed_actions)
    return {"machine": snapshot, "action": proposal.action, "resource_uri": proposal.resource_uri,
            "choice": proposal.choice, "verdict": verdict_label(verdict)}


def verdict_label(verdict: StepVerdict) -> str:
    return f"allowed → {verdict.next_status}" if verdict.allowed else f"refused ({verdict.code})"


def machine_of_record(record: Mapping[str, Any], overrides: Overrides = DEFAULT_OVERRIDES) -> Machine:
    data = dict(record["machine"])
    limits = overrides.limits(Limits(**data.pop("limits")))
    return Machine(**{**data, "counters": Counters(**data.pop("counters")), "limits": limits,
                      "allowed_actions": tuple(data.get("allowed_actions") or ())})


def replay_guard_log(log: Sequence[Mapping[str, Any]], recorded_status: str | None, thread_id: str = "",
                     overrides: Overrides = DEFAULT_OVERRIDES, contracts: Sequence[Mapping[str, Any]] = ()) -> Replay:
    """``contracts``: the contract outputs the run kept (``{contract, at, recorded, value}``, ``at`` the
    position of the guard question whose step made it), each validated again where it was made."""
    result = Replay(thread_id, recorded_status=recorded_status, graph="tasklist_agent")
    for position, record in enumerate(log):
        proposal = Proposal(record["action"], resource_uri=record.get("resource_uri"), choice=record.get("choice"))
        verdict = guard(machine_of_record(record, overrides), proposal)
        decision = Decision(position, f"tasklist.{record['action']}", record["verdict"], verdict_label(verdict))
        result.decisions.append(decision)
        if decision.flipped:
            if not verdict.allowed:
                result.replayed_status, result.stopped = REFUSED_STATUS, f"the guard now refuses {record['action']}: the run stops there"
            else:
                result.stopped = f"needs a new model call: {record['action']} would now run"
            return result
        for output in (o for o in contracts if o["at"] == position):
            replayed = revalidate(output["contract"], output["value"], output["recorded"], overrides.contracts)
            decision = Decision(position, f"contract:{output['contract']}", output["recorded"], replayed)
            result.decisions.append(decision)
            if decision.flipped:
                result.stopped = after_rejection(output["contract"], output["recorded"])
                return result
    result.replayed_status = recorded_status
    return result
