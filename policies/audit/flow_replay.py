"""An assistant turn's tool calls re-decided under changed trust (pure).

For every call the loop let through, the turn records in ``flow_log`` (``flow_record``) the tool's
approval trait, whether it is read-only, and what the data-flow policy found (its pause codes, a
refusing rule): everything the execution was decided from. Replay derives the trait again with the
user's trust changed (``tools.trust`` / ``tools.untrust``, through ``approval_for``) and the execution
again (``flow_execution``). A call that now asks pauses the turn for a person (rules alone); one that
now runs unasked would hand its result to the model: a new model call, where replay stops.

A thread holds many turns: when a new one starts, the one before is kept (``flow_turn``: its number,
status and log; the latest ``MAX_KEPT_TURNS``), and ``replay_flow_turns`` re-decides them in order.
A flip in one turn stops the replay there: every later turn followed from how that one ended.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from reins.policies.audit.contract_replay import after_rejection, revalidate
from reins.policies.tools.data_flow import FlowDecision, flow_execution
from reins.policies.audit.replay import DEFAULT_OVERRIDES, Decision, Overrides, Replay
from reins.policies.tools.approval import Approval, approval_for

PAUSED = "paused"  # the status of a turn waiting for a person's approval
MAX_KEPT_TURNS = 50  # finished turns a thread keeps for replay (each a few hundred bytes); the oldest go first


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
                    overrides: Overrides = DEFAULT_OVERRIDES, answer: Mapping[str, Any] | None = None) -> Replay:
    """One turn's calls re-decided, then its ``answer`` (the answer contract's kept output), validated
    again by its schema and limits (``reins.policies.audit.contract_replay``)."""
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
    if answer:
        replayed = revalidate(answer["contract"], answer["value"], answer["recorded"], overrides.contracts)
        decision = Decision(len(log) + 1, f"contract:{answer['contract']}", answer["recorded"], replayed)
        result.decisions.append(decision)
        if decision.flipped:
            result.stopped = after_rejection(answer["contract"], answer["recorded"])
            return result
    result.replayed_status = recorded_status
    return result


def flow_turn(number: int, status: str, log: Sequence[Mapping[str, Any]],
              answer: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A finished turn as the thread keeps it for replay (checkpoint-safe): its calls, and the answer
    contract's output (``{contract, recorded, value}``) when the answer came from the model."""
    return {"turn": number, "status": status, "log": [dict(record) for record in log],
            "answer": dict(answer) if answer else None}


def kept_turns(kept: Sequence[Mapping[str, Any]], ended: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The thread's kept turns with the one that just ``ended`` (a ``flow_turn``), the latest at most."""
    turns = [dict(turn) for turn in kept] + ([dict(ended)] if ended else [])
    return turns[-MAX_KEPT_TURNS:]


def replay_flow_turns(turns: Sequence[Mapping[str, Any]], thread_id: str = "",
                      overrides: Overrides = DEFAULT_OVERRIDES) -> Replay:
    """Every turn of a thread (``flow_turn``s, oldest first, the latest included) re-decided in order,
    up to the first that flips."""
    result = Replay(thread_id, graph="assistant")
    for position, turn in enumerate(turns):
        one = replay_flow_log(turn["log"], turn["status"], thread_id, overrides, turn.get("answer"))
        result.decisions += [replace(decision, chat_turn=turn["turn"]) for decision in one.decisions]
        result.recorded_status, result.replayed_status = one.recorded_status, one.replayed_status
        if one.first_flip:
            later = len(turns) - position - 1
            result.stopped = f"turn {turn['turn']}: {one.stopped}" + (
                f" (the {later} later turn(s) followed from this one)" if later else "")
            return result
    return result
