"""The bounded tool loop (D of PDCA): the model proposes one tool call per turn, the loop guards
decide whether it runs, the runtime runs it and records the observation.

Unknown tools, invalid arguments and tool exceptions become (redacted) observations — never crashes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from pydantic import ValidationError

from nodes.assistant.check_act import max_steps
from nodes.assistant.context import AssistantContext
from nodes.assistant.deps import AssistantDeps, progress_for
from nodes.assistant.prompts import step_messages
from nodes.assistant.state import AssistantState, NodeSteps, PendingCall, ToolRecord, Update, traced
from policies.answer_check import assign_plan_step
from policies.loop_guards import (
    MAX_STEPS,
    REPEATED_CALL,
    STEP_LIMIT,
    call_signature,
    check_repeat,
    check_step_budget,
    detect_stall,
)
from policies.redaction import redact
from policies.replanning import active_steps
from runtime.chat_tools import ToolFailure
from runtime.calls import ToolTurn
from runtime.contracts import safe_error
from runtime.registry import ScopedTools
from runtime.steps import attempt, recorded_step
from schemas.assistant import AssistantStep

_TOOL_NAME = re.compile(r"[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*")
OBSERVATION_CHARS = 4000  # read_doc's cut; http_get already returns at most 500 characters
MODEL_ERROR = "model_error"


def _issues(error: ValidationError) -> str:
    return ", ".join(f"{'.'.join(map(str, e.get('loc', ()))) or '$'}: {e.get('type')}" for e in error.errors()[:5])


def parse_step(message: AIMessage) -> AssistantStep:
    """The tool-calling turn as the ``assistant.step`` contract (raises ValidationError)."""
    calls = [{"tool": c.get("name", ""), "args": c.get("args") or {}, "call_id": c.get("id")} for c in message.tool_calls]
    content = message.content if isinstance(message.content, str) else ""
    return AssistantStep.model_validate({"calls": calls, "note": redact(content, 1000)})


def run_tool(tools: ScopedTools, call: Mapping[str, Any]) -> tuple[bool, str]:
    """Execute one call against the chat-scoped tools; (ok, observation)."""
    name = str(call.get("tool", ""))
    if call.get("error"):
        return False, str(call["error"])
    tool = tools.get(name)
    if tool is None or tool.func is None:
        shown = redact(name, 64) or "(empty)"
        available = ", ".join(t.name for t in tools if t.func is not None)
        return False, f"unknown tool {shown!r}; available tools: {available}"
    try:
        args = tool.args_schema.model_validate(call.get("args") or {})
    except ValidationError as error:
        return False, f"invalid arguments for {name}: {_issues(error)}"
    try:
        result = tool.func(**args.model_dump())
    except ToolFailure as error:
        return False, redact(str(error), OBSERVATION_CHARS)
    except Exception as error:  # a tool bug is an observation, not a crash
        return False, f"{name} failed: {safe_error(error, 300)}"
    return True, redact(str(result), OBSERVATION_CHARS)


def tool_label(name: object) -> str:
    """A tool name as titles and summaries show it: only a well-formed identifier, never raw text."""
    return name if isinstance(name, str) and _TOOL_NAME.fullmatch(name) else "invalid tool name"


def propose_step(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> NodeSteps:
    steps_taken = state.get("steps_taken", 0)
    records = state.get("records", [])
    number = steps_taken + 1
    budget = check_step_budget(steps_taken, max_steps(state))
    if not budget.allowed and state.get("intent") == "SIMPLE_TOOL":  # its one call is done; not a stop
        return {"pending_call": None}
    with recorded_step(progress_for(runtime), f"propose-{number}", f"Choose tool step {number}") as step:
        if not budget.allowed:
            step.status, step.summary = "skipped", f"loop stopped before step {number} (step limit {MAX_STEPS})"
            return {"pending_call": None, "stop_reason": STEP_LIMIT, "trace": traced(state, step.trace())}
        outcome = yield from attempt(
            ToolTurn("assistant.step", step_messages(state, deps.tools), deps.models_for(runtime), deps.tools.langchain_tools())
        )
        if not outcome.ok:  # a failing model ends the loop; what ran so far is still answered
            step.status, step.summary = "failed", f"loop stopped: model turn failed ({outcome.reason()})"
            return {"pending_call": None, "stop_reason": MODEL_ERROR, "trace": traced(state, step.trace()),
                    "metrics": outcome.metrics}
        update, step.summary = _proposal(outcome.value.message, number, records)
    return {**update, "trace": traced(state, step.trace()), "metrics": outcome.metrics}


def _proposal(message: AIMessage, number: int, records: list[ToolRecord]) -> tuple[Update, str]:
    """What the loop does with the model's tool-calling turn (step ``number``), and a summary of
    what and why."""
    try:
        proposed = parse_step(message)
    except ValidationError as error:
        names = [str(c.get("name", ""))[:64] for c in message.tool_calls]
        call: PendingCall = {"tool": names[0] if names else "", "args": {}, "error": f"invalid tool call: {_issues(error)}"}
        return {"pending_call": call, "steps_taken": number}, "invalid tool call"
    if proposed.finished:
        return {"pending_call": None}, "the model made no tool call (done)"
    chosen = proposed.calls[0]
    summary = f"proposed {chosen.tool}"
    if len(proposed.calls) > 1:
        summary += f"; {len(proposed.calls) - 1} extra tool call(s) ignored (one per step)"
    repeat = check_repeat([call_signature(r["tool"], r["args"]) for r in records], call_signature(chosen.tool, chosen.args))
    if not repeat.allowed:
        summary += "; loop stopped, requested a third time with the same arguments"
        return {"pending_call": None, "stop_reason": REPEATED_CALL}, summary
    return {"pending_call": {"tool": chosen.tool, "args": dict(chosen.args)}, "steps_taken": number}, summary


def execute_tool(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> Update:
    call: PendingCall = state.get("pending_call") or {"tool": "", "args": {}}
    records = list(state.get("records", []))
    number = len(records) + 1
    label = tool_label(call["tool"])
    with recorded_step(progress_for(runtime), f"tool-{number}", f"Tool step {number}: {label}") as step:
        ok, output = run_tool(deps.tools, call)
        plan = state.get("plan")
        record: ToolRecord = {
            "n": number,
            # A failed run is counted against the step it tried to serve (replanning reads that).
            "step": assign_plan_step(active_steps(plan), records, str(call["tool"])),
            "tool": str(call["tool"]),
            "args": call["args"] or {},
            "ok": ok,
            "output": output,
        }
        records.append(record)
        # Names and status only, never the tool's output.
        step.status, step.summary = ("completed" if ok else "failed"), f"{label}: {'ok' if ok else 'error'}"
        tool = deps.tools.get(str(call["tool"]))
        if ok and tool is not None and getattr(tool.func, "trace_result", False):  # e.g. what forget deleted
            step.summary += f"; {output}"
        stall = detect_stall([r["output"] for r in records])
        if not stall.allowed:
            step.summary += "; loop stopped, consecutive observations are nearly identical (stall)"
    update: Update = {"records": records, "pending_call": None, "trace": traced(state, step.trace(plan_step=record["step"]))}
    if not stall.allowed:
        update["stop_reason"] = stall.reason
    return update


def route_after_proposal(state: AssistantState) -> str:
    return "execute_tool" if state.get("pending_call") else "draft_answer"


def route_after_execution(state: AssistantState) -> str:
    if state.get("stop_reason") or state.get("intent") == "SIMPLE_TOOL":
        return "draft_answer"
    return "propose_step"
