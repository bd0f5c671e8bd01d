"""One tool call of a step (``execute_tool``, one ``Send`` per call): pause first when the rules
say so, then run it through ``runtime.tool_runner`` and hand the observation to ``observe``.

- A side-effecting call pauses the thread with ``interrupt`` *before* it runs: the payload names
  the tool, its exact arguments and the decisions allowed. An approval covers this call with
  these arguments only; a rejection never runs it; an edit runs the edited arguments once they fit
  the tool's schema. A decision that does not fit keeps the call paused, with a one-line error.
- ``ask_user`` pauses with the question; the answer is the observation.
- A read-only call that failed for a retryable reason is dispatched once more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.assistant.context import AssistantContext
from nodes.assistant.data_flow import execution_of, pause_details
from nodes.assistant.deps import AssistantDeps, progress_for
from nodes.assistant.executor import tool_label, traits_of
from nodes.assistant.state import NodeSteps, Observed, PendingCall, ToolRecord
from policies.answer_check import assign_plan_step
from policies.replanning import active_steps
from policies.tool_calls import (
    APPROVAL_DECISIONS,
    execution_for,
    read_answer,
    read_decision,
    rejection_observation,
    should_dispatch_again,
)
from runtime.registry import RegisteredTool
from runtime.steps import recorded_step
from runtime.tool_runner import CallResult, RunTool, arg_issues, digest

APPROVAL = "tool_approval"
QUESTION = "question"


def approval_payload(tool: RegisteredTool, args: Mapping[str, Any], error: str = "",
                     details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a person sees before a side-effecting call: the tool, its exact arguments, the shapes
    of the decisions allowed (and why the last decision was refused); ``details``: where each sink
    value came from and why the call pauses (the data-flow hook)."""
    payload = {"kind": APPROVAL, "tool": tool.name, "args": dict(args), "read_only": tool.read_only,
               "description": tool.description, "allowed_decisions": [dict(d) for d in APPROVAL_DECISIONS],
               **(details or {})}
    return {**payload, "error": error} if error else payload


def _edit_problem(tool: RegisteredTool, args: Mapping[str, Any]) -> str:
    issues = arg_issues(tool, args)
    return ("edited args do not fit the tool's schema: " + ", ".join(f"{i['path']} {i['code']}" for i in issues)
            if issues else "")


def approve(tool: RegisteredTool, args: dict[str, Any], details: Mapping[str, Any] | None = None
            ) -> tuple[dict[str, Any] | None, str]:
    """Pause until a valid decision: (arguments to run, "") or (None, the rejection observation)."""
    error = ""
    while True:
        decision = read_decision(interrupt(approval_payload(tool, args, error, details)))
        if not decision.valid:
            error = decision.problem
        elif decision.kind == "reject":
            return None, rejection_observation(decision.reason)
        elif decision.kind == "approve":
            return args, ""
        else:
            error = _edit_problem(tool, decision.args or {})
            if not error:
                return dict(decision.args or {}), ""


def ask(args: Mapping[str, Any]) -> str:
    """Pause with the question until a valid answer; the answer is the observation."""
    options = args.get("options") or None
    error = ""
    while True:
        payload = {"kind": QUESTION, "question": args.get("question", ""), "options": options}
        answer, error = read_answer(interrupt({**payload, "error": error} if error else payload), options)
        if not error:
            return answer


def _run(tool: RegisteredTool, args: dict[str, Any], config: RunnableConfig, call_id: str):
    request = RunTool(tool, args, config, call_id)
    result: CallResult = yield request
    dispatches = 1
    while not result.ok and should_dispatch_again(tool.read_only, result.failure, dispatches):
        result = yield request
        dispatches += 1
    return result, dispatches


def execute_tool(task: Mapping[str, Any], config: RunnableConfig, runtime: Runtime[AssistantContext], *,
                 deps: AssistantDeps) -> NodeSteps:
    call: PendingCall = task["call"]
    number = call.get("n", 1)
    label = tool_label(call["tool"])
    tools = deps.tools_for(runtime)
    tool = tools.get(call["tool"])
    args = dict(call.get("args") or {})
    with recorded_step(progress_for(runtime), f"tool-{number}", f"Tool step {number}: {label}") as step:
        # A call whose tool is gone (its server did not start again after a restart) is an observation too.
        result = CallResult(False, call.get("error") or f"{label} is not available any more")
        dispatches, note = 0, ""
        if not call.get("error") and tool is not None:
            execution = execution_of(call, execution_for(traits_of(tools, tool.name)))  # the data-flow hook
            if execution == "ask":
                result, note = CallResult(True, ask(args)), "answered by the user"
            else:
                run_args, rejection = approve(tool, args, pause_details(call)) if execution == "approve" else (args, "")
                if run_args is None:
                    result, note = CallResult(False, rejection, "rejected"), "rejected by the user"
                else:
                    note = "approved" if execution == "approve" else ""
                    args = run_args
                    result, dispatches = yield from _run(tool, run_args, config, f"call_{number}")
        plan = task.get("plan")
        records = task.get("records") or []
        record: ToolRecord = {
            "n": number,
            # A failed run is counted against the step it tried to serve (replanning reads that).
            "step": assign_plan_step(active_steps(plan), records, str(call["tool"])),
            "tool": str(call["tool"]),
            "args": args,
            "ok": result.ok,
            "output": result.output,
        }
        outcome = "ok" if result.ok else (result.failure or "error")
        # Names, a digest of the arguments, timing and outcome; never the tool's output.
        step.status = "completed" if result.ok else "failed"
        args_digest = digest(args)
        step.summary = f"{label}: {'ok' if result.ok else 'error'}"
        if note:
            step.summary += f"; {note}"
        if result.ok and tool is not None and tool.trace_result:  # e.g. the notes forget deleted
            step.summary += f"; {result.output}"
        if dispatches > 1:
            step.summary += f"; dispatched {dispatches} times"
    trace = step.trace(plan_step=record["step"], tool=label, args_digest=args_digest, started_at=result.started_at,
                       duration_ms=result.duration_ms, outcome=outcome)
    observed: Observed = {"record": record, "trace": trace}
    return {"observed": [observed]}


def resume_problem(payload: Mapping[str, Any], value: Any, tools: Any) -> str:
    """Why ``value`` cannot answer the pause ``payload`` (an approval or a question), "" when it can:
    the same rules the node applies, so a caller can refuse a decision before resuming."""
    if payload.get("kind") == QUESTION:
        return read_answer(value, payload.get("options"))[1]
    decision = read_decision(value)
    if not decision.valid:
        return decision.problem
    tool = tools.get(str(payload.get("tool", "")))
    return _edit_problem(tool, decision.args or {}) if decision.kind == "edit" and tool is not None else ""
