"""One tool call of a step (``execute_tool``, one ``Send`` per call): pause first when the rules
say so, then run it through ``reins.runtime.tools.runner`` and hand the observation to ``observe``.

- A side-effecting call pauses the thread with ``interrupt`` *before* it runs
  (``reins.nodes.assistant.approval``): an approval covers this call with these arguments only and is
  taken once; a rejection never runs it; an edit runs the edited arguments once they fit the
  tool's schema. A decision that does not fit keeps the call paused, with a one-line error.
- ``ask_user`` pauses with the question; the answer is the observation.
- A read-only call that failed for a retryable reason is dispatched once more.
"""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from reins.nodes.assistant.approval import approve, ask, ask_for_server
from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import AssistantDeps, progress_for, thread_id_of
from reins.nodes.assistant.executor import approval_of, tool_label
from reins.nodes.assistant.state import NodeSteps, Observed, PendingCall, ToolRecord
from reins.policies.assistant.answer_check import credit_plan_steps
from reins.policies.tools.approvals import IDEMPOTENCY_META, call_fingerprint, idempotency_key
from reins.policies.assistant.replanning import active_steps
from reins.policies.tools.calls import should_dispatch_again
from reins.policies.tools.gate import execution_of, pause_details, thread_trait
from reins.runtime.tools.mcp_tools import SESSIONS
from reins.runtime.tools.registry import RegisteredTool
from reins.runtime.execution.run_ledger import CAP_CODE, BudgetCapReached
from reins.runtime.execution.lease import Lease, Leased
from reins.runtime.execution.steps import recorded_step
from reins.runtime.tools.runner import QUESTION_TAKEN, CallResult, RunTool, digest
from reins.runtime.execution.user_input import DecisionTaken


def _run(tool: RegisteredTool, args: dict[str, Any], config: RunnableConfig, call_id: str, runtime: Any,
         meta: dict[str, Any] | None = None, lease: Lease | None = None):
    """Run the call (an approved one under its claim's lease, renewed while it runs); the result and
    how many times it was dispatched."""
    key = call_key_of(config) if tool.server else None
    request = RunTool(tool, args, config, call_id, runtime, meta, key)

    def leased(made: RunTool) -> Any:
        return Leased(lease, made) if lease is not None else made

    try:
        result: CallResult = yield leased(request)
    except BudgetCapReached as error:  # not run: the observation says which cap stopped it
        return CallResult(False, str(error), CAP_CODE), 0
    dispatches = 1
    while not result.ok and should_dispatch_again(tool.read_only, result.failure, dispatches):
        try:
            result = yield leased(request)
        except BudgetCapReached as error:  # the second dispatch is checked against the caps too
            return CallResult(False, str(error), CAP_CODE), dispatches
        dispatches += 1
    while result.question is not None:  # the server asks mid-call: the person answers, the same call goes on
        reply = ask_for_server({**result.question, "call": key})
        result = yield leased(replace(request, reply=reply))
        if result.failure == QUESTION_TAKEN:  # another resume answered this question first
            raise DecisionTaken(result.output)
    return result, dispatches


def call_key_of(config: RunnableConfig) -> str:
    """The key of this node's MCP call: its thread and its task (the same when the node re-runs)."""
    configurable = config.get("configurable") or {}
    return f"{configurable.get('thread_id', '')}|{configurable.get('checkpoint_ns', '')}"


@declare(acts=("tool",), guards=("tool_calls",))
def execute_tool(task: Mapping[str, Any], config: RunnableConfig, runtime: Runtime[AssistantContext], *,
                 deps: AssistantDeps) -> NodeSteps:
    call: PendingCall = task["call"]
    number = call.get("n", 1)
    label = tool_label(call["tool"])
    tools = yield from deps.load_tools(runtime)  # a resume in a new process starts the servers here
    tool = tools.get(call["tool"])
    args = dict(call.get("args") or {})
    with recorded_step(progress_for(runtime), f"tool-{number}", f"Tool step {number}: {label}") as step:
        # A call whose tool is gone (its server did not start again after a restart) is an observation too.
        result = CallResult(False, call.get("error") or f"{label} is not available any more")
        dispatches, note, allowed = 0, "", False
        if not call.get("error") and tool is not None:
            trait = thread_trait(approval_of(tools, tool.name), tool.name, task.get("allowed") or ())
            approval = execution_of(call, trait)  # the data-flow decision may ask
            if approval == "question":
                result, note = CallResult(True, ask(args)), "answered by the user"
            else:
                running = bool(tool.server) and SESSIONS.waiting(call_key_of(config))
                taken = ((yield from approve(tool, args, config, pause_details(call), running=running))
                         if approval == "ask" else None)
                note = taken.note if taken else ""
                allowed = bool(taken and taken.thread)
                if taken is not None and taken.args is None:
                    result = CallResult(taken.ok, taken.observation, taken.failure)
                else:
                    args = taken.args if taken is not None else args
                    # An approved call tells its server how to recognise it again (a server that
                    # deduplicates runs it once, however often it is dispatched).
                    key = idempotency_key(thread_id_of(runtime), number, call_fingerprint(tool.name, args))
                    meta = {IDEMPOTENCY_META: key} if taken is not None and tool.server else None
                    lease = taken.lease if taken is not None else None
                    result, dispatches = yield from _run(tool, args, config, f"call_{number}", runtime, meta, lease)
        plan = task.get("plan")
        records = task.get("records") or []
        record: ToolRecord = {
            "n": number,
            # A failed run is counted against the step it tried to serve (replanning reads that); the
            # batch's earlier calls have taken theirs.
            "step": credit_plan_steps(active_steps(plan), records, [*task.get("calls_before", ()), str(call["tool"])])[-1],
            "tool": str(call["tool"]),
            "args": args,
            "ok": result.ok,
            "output": result.output,
        }
        if result.ok and tool is not None and not tool.read_only:
            record["changed"] = True
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
    if allowed:  # the person allowed this tool for the rest of the thread
        return {"observed": [observed], "allowed_tools": [str(call["tool"])]}
    return {"observed": [observed]}
