"""The gate of the assistant's proposed tool calls (pure): for each call the model proposed in one
step, whether it runs now, pauses for a person's approval, asks the user or is refused; in which
batch; why; what a paused thread shows; and what replay records of it.

One function, ``decide_calls``, composes the tool rules without changing any of them:

- the tool's approval trait (``approval``) — a tool a person allowed for the rest of the thread no
  longer asks (``thread_trait``) — made stricter by the data-flow policy (``data_flow``:
  provenance, egress, purpose, the user's flow rules), decided for every proposed call first, from
  the turn's provenance record and the calls that succeeded before this step;
- the batching rule (``calls.batch``): up to three calls that run unasked go together, a call that
  pauses or is refused goes alone; the step budget caps the first batch, and only the first batch
  is taken this step (the model proposes the rest again once it has seen the results);
- the repeat guard (``loop_guards``): a call requested a third time with the same arguments stops
  the loop, and nothing of the step runs;
- the question limit (``calls.question_allowed``): a question over it is refused;
- the prompt a paused thread shows, and the replay record (``audit.flow_replay.flow_record``) of
  every call the step takes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reins.policies.audit.flow_replay import flow_record
from reins.policies.tools.approval import Approval
from reins.policies.tools.calls import MAX_PARALLEL_CALLS, MAX_QUESTIONS_PER_TURN, batch, question_allowed
from reins.policies.tools.data_flow import FlowDecision, FlowExecution, FlowTool, TurnRecord, action_words, decide
from reins.policies.tools.data_flow import provenance_lines
from reins.policies.tools.loop_guards import MAX_STEPS, REPEATED_CALL, call_signature, check_repeat
from reins.policies.tools.provenance import Source
from reins.schemas.flow_rules import FlowRule

# What the gate decides for a call: the data-flow policy's executions, one vocabulary.
RUN: FlowExecution = "run"  # runs now, unasked
APPROVE: FlowExecution = "ask"  # pauses for a person's approval before it runs
QUESTION: FlowExecution = "question"  # the call is a question to the user
REFUSE: FlowExecution = "refuse"  # never runs; its observation says why

FLOW = "flow"  # the key of the stored decision on a pending call (checkpointed with it)
REFUSED = "refused: "
QUESTION_LIMIT = "question limit reached: at most {limit} questions per turn; answer with what you have"
REPEATED = "loop stopped, a call was requested a third time with the same arguments"


@dataclass(frozen=True)
class GateTool:
    """What the gate knows of a tool in scope: its approval trait and its data-flow declaration."""

    approval: Approval
    flow: FlowTool

    @property
    def name(self) -> str:
        return self.flow.name


@dataclass(frozen=True)
class ProposedCall:
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PastCall:
    """A call recorded earlier in this turn (a failure and a refusal count too)."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    ok: bool = True


@dataclass(frozen=True)
class GateSettings:
    """The user's rules: flow rules in force and the hosts they allow (``REINS_HTTP_ALLOWLIST``)."""

    rules: tuple[FlowRule, ...] = ()
    allow_list: tuple[str, ...] = ()
    max_parallel: int = MAX_PARALLEL_CALLS
    max_questions: int = MAX_QUESTIONS_PER_TURN


@dataclass(frozen=True)
class LoopState:
    """Where the turn's tool loop stands: the calls recorded so far and the step budget."""

    done: tuple[PastCall, ...] = ()
    steps_taken: int = 0
    max_steps: int = MAX_STEPS
    allowed: tuple[str, ...] = ()  # tools a person allowed for the rest of this thread


@dataclass(frozen=True)
class GatedCall:
    """One proposed call as the gate decided it.

    ``batch``: 0 runs in this step, 1, 2, … are left for later steps (the model proposes them
    again); ``n``: its record number when this step takes it; ``error``: the observation a refused
    call is recorded with; ``prompt``: what a paused thread shows ("" when it does not pause);
    ``flow``: the data-flow decision as plain data, stored on the pending call; ``replay``: the
    record ``reins replay`` re-decides it from (only for a call this step takes)."""

    tool: str
    args: Mapping[str, Any]
    decision: FlowExecution
    batch: int
    reasons: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    n: int | None = None
    error: str = ""
    prompt: str = ""
    flow: Mapping[str, Any] = field(default_factory=dict)
    replay: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class GateResult:
    calls: tuple[GatedCall, ...]
    stop_reason: str = ""  # the loop guard that stopped the loop (then nothing of the step runs)
    summary: str = ""  # what the step proposed and why, for the trace

    @property
    def now(self) -> tuple[GatedCall, ...]:
        """The calls this step takes, in order (run, pause, ask or be recorded as refused)."""
        return () if self.stop_reason else tuple(c for c in self.calls if c.batch == 0)


# ------------------------------------------------------------------------------------ the stored decision


def thread_trait(approval: Approval, tool: str, allowed: Sequence[str]) -> Approval:
    """The tool's trait in this thread: one that asks runs once a person allowed it for the rest
    of the thread (the data-flow rules still pause any call they would); a question stays one."""
    return RUN if approval == APPROVE and tool in allowed else approval


def stored_flow(decision: FlowDecision) -> dict[str, Any]:
    """The data-flow decision as plain data on the pending call (checkpoint-safe)."""
    return {"execution": decision.execution, **decision.payload(), "lines": provenance_lines(decision.origins)}


def execution_of(call: Mapping[str, Any], base: Approval) -> str:
    """The execution stored on a pending call, never looser than the tool's trait ``base`` now
    (a resume in another process reads the trait again)."""
    flow = call.get(FLOW) or {}
    execution = flow.get("execution")
    return execution if execution in (APPROVE, QUESTION, REFUSE) and base != QUESTION else base


def pause_details(call: Mapping[str, Any]) -> dict[str, Any]:
    """What an approval prompt adds: each sink value's origin and why the call pauses."""
    flow = call.get(FLOW) or {}
    return {"provenance": list(flow.get("provenance", [])), "pause_reasons": list(flow.get("pause_reasons", []))}


def pause_text(flow: Mapping[str, Any]) -> str:
    """The same for a person reading the thread: one line per reason and per sink value."""
    lines = [f"It asks because {reason}." for reason in flow.get("pause_reasons", [])]
    lines += [f"- {line}" for line in flow.get("lines", [])]
    return "\n".join(lines)


def prompt_text(tool: str, args: Mapping[str, Any], execution: str, flow: Mapping[str, Any]) -> str:
    """What a paused thread shows a person: the question with its numbered options, or the call
    waiting for approval and why; "" for a call that does not pause."""
    if execution == QUESTION:
        options = args.get("options") or []
        listed = "".join(f"\n{number}. {option}" for number, option in enumerate(options, 1))
        return f"{args.get('question', '')}{listed}"
    if execution == APPROVE:
        arguments = json.dumps(dict(args), ensure_ascii=False)
        text = f"Before I run {tool} with {arguments}, I need your approval: approve, reject or edit."
        details = pause_text(flow)
        return f"{text}\n{details}" if details else text
    return ""


# ------------------------------------------------------------------------------------ the gate


def turn_record(sources: Sequence[Source], request: str, tools: Sequence[GateTool], settings: GateSettings,
                loop: LoopState) -> TurnRecord:
    """The data-flow policy's view of the turn: the provenance record, the calls that succeeded
    (with whether each changes nothing), the user's rules and hosts, and the action words of
    every tool in scope."""
    read_only = {tool.name: tool.flow.read_only for tool in tools}
    calls = tuple((past.tool, read_only.get(past.tool, False)) for past in loop.done if past.ok)
    vocabulary = tuple(dict.fromkeys(word for tool in tools for word in action_words(tool.flow)))
    made = tuple((past.tool, past.args) for past in loop.done if past.ok)
    return TurnRecord(tuple(sources), request, calls, tuple(settings.rules), tuple(settings.allow_list), vocabulary,
                      made)


def _batches(executions: Sequence[str], first_cap: int, limit: int) -> list[int]:
    """Each call's batch: the batching rule applied again to what the batch before left."""
    numbers, start, index = [], 0, 0
    while start < len(executions):
        size = batch([e if e != REFUSE else APPROVE for e in executions[start:]], limit)  # type: ignore[misc]
        if index == 0:
            size = min(size, first_cap)
        if size == 0:  # no budget left for this step: everything waits
            index += 1
            continue
        numbers += [index] * size
        start, index = start + size, index + 1
    return numbers


def decide_calls(calls: Sequence[ProposedCall], *, sources: Sequence[Source], request: str,
                 tools: Sequence[GateTool], settings: GateSettings = GateSettings(),
                 loop: LoopState = LoopState()) -> GateResult:
    """Every proposed call decided at once (see the module's docstring for the rules, in order)."""
    declared = {tool.name: GateTool(thread_trait(tool.approval, tool.name, loop.allowed), tool.flow) for tool in tools}
    turn = turn_record(sources, request, tools, settings, loop)
    flows = []
    for call in calls:
        tool = declared.get(call.tool)
        # A tool not in scope asks: it never runs unasked.
        flows.append(decide(tool.approval, tool.flow, call.args, turn) if tool else FlowDecision(APPROVE))
    remaining = loop.max_steps - loop.steps_taken
    batches = _batches([f.execution for f in flows], max(remaining, 0), settings.max_parallel)
    taken = [call for call, number in zip(calls, batches) if number == 0]
    summary = f"proposed {', '.join(c.tool for c in taken)}"
    if len(calls) > len(taken):
        summary += f"; {len(calls) - len(taken)} more call(s) left for later steps"
    signatures = [call_signature(past.tool, past.args) for past in loop.done]
    asked = sum(1 for past in loop.done if _asks(declared, past.tool))
    first = len(loop.done) + 1
    gated: list[GatedCall] = []
    for offset, (call, flow, number) in enumerate(zip(calls, flows, batches)):
        decision, reasons = flow.execution, flow.reasons
        if number != 0:  # not this step: what the rules say now, nothing recorded
            gated.append(GatedCall(call.tool, dict(call.args), decision, number, reasons, flow.codes))
            continue
        signature = call_signature(call.tool, call.args)
        if not check_repeat(signatures, signature).allowed:
            return _stopped(calls, flows, batches, offset, summary)
        signatures.append(signature)
        error = REFUSED + "; ".join(flow.reasons) if decision == REFUSE else ""
        if _asks(declared, call.tool):
            if not question_allowed(asked, settings.max_questions):
                error = QUESTION_LIMIT.format(limit=settings.max_questions)
                decision, reasons = REFUSE, (error,)
            asked += 1
        tool = declared.get(call.tool)
        stored = stored_flow(flow)
        replay = flow_record(first + offset, call.tool, bool(tool and tool.flow.read_only),
                             tool.approval if tool else APPROVE, flow)
        prompt = "" if error else prompt_text(call.tool, call.args, decision, stored)
        gated.append(GatedCall(call.tool, dict(call.args), decision, 0, reasons, flow.codes, first + offset, error,
                               prompt, stored, replay))
    return GateResult(tuple(gated), "", summary)


def _asks(declared: Mapping[str, GateTool], name: str) -> bool:
    tool = declared.get(name)
    return bool(tool and tool.approval == QUESTION)


def _stopped(calls: Sequence[ProposedCall], flows: Sequence[FlowDecision], batches: Sequence[int], repeated: int,
             summary: str) -> GateResult:
    """A call of the step was requested a third time: the loop stops, nothing of the step runs."""
    gated = []
    for offset, (call, flow, number) in enumerate(zip(calls, flows, batches)):
        if number == 0:
            why = REPEATED if offset == repeated else f"not run: the loop stopped at {calls[repeated].tool}"
            gated.append(GatedCall(call.tool, dict(call.args), REFUSE, 0, (why,), flow.codes))
        else:
            gated.append(GatedCall(call.tool, dict(call.args), flow.execution, number, flow.reasons, flow.codes))
    return GateResult(tuple(gated), REPEATED_CALL, f"{summary}; {REPEATED}")


__all__ = ["APPROVE", "FLOW", "GateResult", "GateSettings", "GateTool", "GatedCall", "LoopState", "PastCall",
           "ProposedCall", "QUESTION", "REFUSE", "RUN", "decide_calls", "execution_of", "pause_details", "pause_text",
           "prompt_text", "stored_flow", "thread_trait", "turn_record"]
