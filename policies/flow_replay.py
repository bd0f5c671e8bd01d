"""An assistant turn's tool calls re-decided under changed trust (pure).

For every call the loop let through, the turn records in ``flow_log`` (``flow_record``) the tool's
approval trait, whether it is read-only, and what the data-flow policy found (its pause codes, a
refusing rule): everything the execution was decided from. Replay derives the trait again with the
user's trust changed (``tools.trust`` / ``tools.untrust``, through ``approval_for``) and the execution
again (``flow_execution``). A call that now asks pauses the turn for a person (rules alone); one that
now runs unasked would hand its result to the model: a new model call, where replay stops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from policies.data_flow import FlowDecision, flow_execution
from policies.replay import DEFAULT_OVERRIDES, Decision, Overrides, Replay
from policies.tool_approval import Approval, approval_for

PAUSED = "paused"  # the status of a turn waiting for a person's approval


def flow_record(number: int, tool: str, read_only: bool, base: Approval, decision: FlowDecision) -> dict[str, Any]:
    """One call's execution and what it was decided from, as plain data (checkpoint-safe)."""
    return {"n": number, "tool": tool, "read_only": read_only, "base": base, "codes": list(decision.codes),
            "refused": decision.execution == "refuse", "execution": decision.execution}


def trait_with(overrides: Overrides, tool: str, read_only: bool, base: Approval) -> Approval:
    """The tool's approval trait with the user's trust changed (a question stays a question)."""
    if tool not in overrides.trust and tool not in overrides.untrust:
        return base
    return approval_for(read_only=read_only, trusted=tool in overrides.trust, asks_user=base == "question")


def replay_flow_log(log: Sequence[Mapping[str, Any]], recorded_status: str | None, thread_id: str = "",
                    overrides: Overrides = DEFAULT_OVERRIDES) -> Replay:
    result = Replay(thread_id, recorded_status=recorded_status, graph="assistant")
    for record in log:
        trait = trait_with(overrides, record["tool"], record["read_only"], record["base"])
        execution = flow_execution(trait, refused=record["refused"], paused=bool(record["codes"]) and not record["refused"])
        decision = Decision(record["n"], f"tool:{record['tool']}", record["execution"], execution)
        result.decisions.append(decision)
        if decision.flipped:
            if execution in ("ask", "question"):
                result.replayed_status, result.stopped = PAUSED, f"call {record['n']} would wait for a person's approval"
            else:
                result.stopped = f"needs a new model call: {record['tool']} would run unasked and its result go to the model"
            return result
    result.replayed_status = recorded_status
    return result
