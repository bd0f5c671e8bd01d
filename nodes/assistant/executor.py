"""The bounded tool loop (D of PDCA): the model proposes one tool call per turn, the loop guards
decide whether it runs, the runtime runs it and records the observation.

Unknown tools, invalid arguments and tool exceptions become (redacted) observations — never crashes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import ValidationError

from nodes.assistant.deps import AssistantDeps, progress_for
from nodes.assistant.prompts import step_messages
from nodes.assistant.state import AssistantState
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
from runtime.chat_tools import ToolFailure
from runtime.calls import ToolTurn
from runtime.contracts import safe_error
from runtime.registry import ScopedTools
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


def _max_steps(state: AssistantState) -> int:
    return 1 if state.get("intent") == "SIMPLE_TOOL" else MAX_STEPS


def propose_step(state: AssistantState, runtime: Any, *, deps: AssistantDeps) -> dict[str, Any]:
    trace = list(state.get("trace", []))
    steps_taken = state.get("steps_taken", 0)
    records = state.get("records", [])
    budget = check_step_budget(steps_taken, _max_steps(state))
    if not budget.allowed:
        if state.get("intent") == "SIMPLE_TOOL":  # its one call is done; not a stop
            return {"pending_call": None}
        trace.append(f"loop: stopped before step {steps_taken + 1} (step limit {MAX_STEPS})")
        return {"pending_call": None, "stop_reason": STEP_LIMIT, "trace": trace}
    try:
        turn = yield ToolTurn(
            "assistant.step", step_messages(state, deps.tools), deps.models_for(runtime), deps.tools.langchain_tools()
        )
    except Exception as error:  # a failing model ends the loop; what ran so far is still answered
        trace.append(f"loop: model turn failed ({safe_error(error, 160)})")
        return {"pending_call": None, "stop_reason": MODEL_ERROR, "trace": trace, "metrics": getattr(error, "metrics", {})}
    number = steps_taken + 1
    try:
        step = parse_step(turn.message)
    except ValidationError as error:
        names = [str(c.get("name", ""))[:64] for c in turn.message.tool_calls]
        trace.append(f"step {number}: invalid tool call")
        call = {"tool": names[0] if names else "", "args": {}, "error": f"invalid tool call: {_issues(error)}"}
        return {"pending_call": call, "steps_taken": number, "trace": trace, "metrics": turn.metrics}
    if step.finished:
        trace.append(f"step {number}: the model made no tool call (done)")
        return {"pending_call": None, "trace": trace, "metrics": turn.metrics}
    call = step.calls[0]
    if len(step.calls) > 1:
        trace.append(f"step {number}: {len(step.calls) - 1} extra tool call(s) ignored (one per step)")
    repeat = check_repeat([call_signature(r["tool"], r["args"]) for r in records], call_signature(call.tool, call.args))
    if not repeat.allowed:
        trace.append(f"loop: stopped, {call.tool} requested a third time with the same arguments")
        return {"pending_call": None, "stop_reason": REPEATED_CALL, "trace": trace, "metrics": turn.metrics}
    pending = {"tool": call.tool, "args": dict(call.args)}
    return {"pending_call": pending, "steps_taken": number, "trace": trace, "metrics": turn.metrics}


def execute_tool(state: AssistantState, runtime: Any, *, deps: AssistantDeps) -> dict[str, Any]:
    call = dict(state.get("pending_call") or {})
    records = list(state.get("records", []))
    trace = list(state.get("trace", []))
    number = len(records) + 1
    # Titles and summaries show a tool name only when it is a well-formed identifier.
    tool_label = str(call.get("tool") or "")
    if not _TOOL_NAME.fullmatch(tool_label):
        tool_label = "invalid tool name"
    with progress_for(runtime).step(f"tool-{number}", f"Tool step {number}: {tool_label}") as step:
        ok, output = run_tool(deps.tools, call)
        step.status = "completed" if ok else "failed"
        step.summary = f"{tool_label}: {'ok' if ok else 'error'}"
    plan_steps = (state.get("plan") or {}).get("steps", [])
    record = {
        "n": number,
        "step": assign_plan_step(plan_steps, records, str(call.get("tool"))) if ok else None,
        "tool": str(call.get("tool", "")),
        "args": call.get("args") or {},
        "ok": ok,
        "output": output,
    }
    records.append(record)
    trace.append(f"step {number}: {tool_label} {'ok' if ok else 'error'}" + (f" (plan step {record['step']})" if record["step"] else ""))
    update: dict[str, Any] = {"records": records, "pending_call": None, "trace": trace}
    stall = detect_stall([r["output"] for r in records])
    if not stall.allowed:
        trace.append("loop: stopped, consecutive observations are nearly identical (stall)")
        update["stop_reason"] = stall.reason
    return update


def route_after_proposal(state: AssistantState) -> str:
    return "execute_tool" if state.get("pending_call") else "draft_answer"


def route_after_execution(state: AssistantState) -> str:
    if state.get("stop_reason") or state.get("intent") == "SIMPLE_TOOL":
        return "draft_answer"
    return "propose_step"
