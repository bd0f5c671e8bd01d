"""The bounded tool loop (D of PDCA): the model proposes tool calls, the rules decide which run and
how, the runtime runs them and records the observations.

``propose_step`` reads the model's turn (a turn without a native call whose text is exactly calls to
the offered tools counts as those calls, as in the delivery manager; ``REINS_TEXT_TOOL_CALLS``): a
malformed call (``invalid_tool_calls``, an unknown tool,
arguments that break the tool's schema) comes back as one observation of ``{path, code}`` pairs;
valid ones go once through the call gate (``reins.policies.tools.gate``: approval, data flow, batch,
repeats, the question limit, the pause text, the replay record) and its answer becomes the step's
state. ``observe`` records what the calls gave, in order, once they all finished.
"""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

import json
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.types import Send
from pydantic import ValidationError

from reins.nodes.assistant.check_act import max_steps
from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.data_flow import gate_inputs
from reins.nodes.assistant.deps import AssistantDeps, progress_for
from reins.nodes.assistant.prompts import step_messages
from reins.nodes.assistant.state import AssistantState, NodeSteps, PendingCall, ToolRecord, Update, traced
from reins.policies.tools.gate import GateResult, decide_calls
from reins.policies.tools.loop_guards import MAX_STEPS, STEP_LIMIT, check_step_budget, detect_stall
from reins.policies.text.redaction import redact
from reins.policies.tools.approval import Approval
from reins.runtime.execution.calls import ToolTurn
from reins.runtime.llm.messages import with_text_tool_calls
from reins.runtime.tools.registry import OFFERED_NAME, ScopedTools
from reins.runtime.execution.run_ledger import CAP_CODE, BudgetCapReached
from reins.runtime.execution.steps import attempt, recorded_step
from reins.runtime.tools.runner import arg_issues
from reins.schemas.assistant import AssistantStep

MODEL_ERROR = "model_error"
MALFORMED = "malformed tool call"


def _issues(error: ValidationError) -> list[dict[str, str]]:
    return [{"path": ".".join(map(str, e.get("loc", ()))) or "$", "code": str(e.get("type"))} for e in error.errors()[:8]]


def parse_step(message: AIMessage) -> AssistantStep:
    """The tool-calling turn as the ``assistant.step`` contract (raises ValidationError)."""
    calls = [{"tool": c.get("name", ""), "args": c.get("args") or {}, "call_id": c.get("id")} for c in message.tool_calls]
    content = message.content if isinstance(message.content, str) else ""
    return AssistantStep.model_validate({"calls": calls, "note": redact(content, 1000)})


def approval_of(tools: ScopedTools, name: str) -> Approval:
    """The tool's approval trait; an unknown tool asks (it never runs unasked)."""
    tool = tools.get(name)
    return tool.trait if tool is not None else "ask"


def malformed_issues(message: AIMessage, tools: ScopedTools) -> list[dict[str, str]]:
    """Every ``{path, code}`` that makes the turn's calls unusable (none when all are valid)."""
    issues = [{"path": f"invalid_tool_calls.{i}", "code": "unparsable_arguments"}
              for i, _ in enumerate(getattr(message, "invalid_tool_calls", None) or [])]
    try:
        proposed = parse_step(message)
    except ValidationError as error:
        return issues + _issues(error)
    for index, call in enumerate(proposed.calls):
        tool = tools.get(call.tool)
        if tool is None or not (tool.runnable or tool.asks_user):
            issues.append({"path": f"calls.{index}.tool", "code": "unknown_tool"})
            continue
        issues += [{"path": f"calls.{index}.{i['path']}", "code": i["code"]} for i in arg_issues(tool, call.args)]
    return issues


def tool_label(name: object) -> str:
    """A tool name as titles and summaries show it: only a well-formed name, never raw text."""
    return name if isinstance(name, str) and OFFERED_NAME.fullmatch(name) else "invalid tool name"


@declare(model=True, guards=("loop_guards",))
def propose_step(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> NodeSteps:
    steps_taken = state.get("steps_taken", 0)
    number = steps_taken + 1
    limit = max_steps(state)
    budget = check_step_budget(steps_taken, limit)
    if not budget.allowed and state.get("intent") == "SIMPLE_TOOL":  # its one call is done; not a stop
        return {"pending_calls": []}
    tools = deps.tools_for(runtime)
    with recorded_step(progress_for(runtime), f"propose-{number}", f"Choose tool step {number}") as step:
        if not budget.allowed:
            step.skip(f"loop stopped before call {number} (limit {MAX_STEPS} calls)")
            return {"pending_calls": [], "stop_reason": STEP_LIMIT, "trace": traced(state, step.trace())}
        models, offered = deps.models_for(runtime, state), tools.langchain_tools()
        outcome = yield from attempt(ToolTurn("assistant.step", step_messages(state, tools), models, offered))
        if not outcome.ok:  # a failing model ends the loop; what ran so far is still answered
            step.fail(f"loop stopped: model turn failed ({outcome.reason()})")
            stop = CAP_CODE if isinstance(outcome.error, BudgetCapReached) else MODEL_ERROR
            return {"pending_calls": [], "stop_reason": stop, "trace": traced(state, step.trace())}
        message, recovered = outcome.value, None
        if models.text_tool_calls == "recover":
            recovered = with_text_tool_calls(message, [tool.name for tool in offered])
        update, step.summary = _proposal(state, recovered or message, tools, runtime, limit)
        if recovered:
            step.summary += " (written as text)"
    return {**update, "trace": traced(state, step.trace(recovered_from_text=True if recovered else None))}


def _proposal(state: AssistantState, message: AIMessage, tools: ScopedTools, runtime: Runtime[AssistantContext] | None,
              limit: int) -> tuple[Update, str]:
    """What the loop does with the model's tool-calling turn, and a summary of what and why: a
    malformed turn is one observation; valid calls go through the call gate once."""
    records = state.get("records", [])
    steps_taken = state.get("steps_taken", 0)
    issues = malformed_issues(message, tools)
    if issues:  # one observation for the model, within the budget
        names = [str(c.get("name", ""))[:64] for c in [*message.tool_calls, *(message.invalid_tool_calls or [])]]
        available = ", ".join(t.name for t in tools if t.runnable or t.asks_user)
        error = f"{MALFORMED}: {json.dumps(issues, ensure_ascii=False)}; available tools: {available}"
        call: PendingCall = {"tool": names[0] if names else "", "args": {}, "error": error, "n": len(records) + 1}
        return {"pending_calls": [call], "steps_taken": steps_taken + 1}, f"{MALFORMED}: {len(issues)} issue(s)"
    proposed = parse_step(message)
    if proposed.finished:
        return {"pending_calls": []}, "the model made no tool call (done)"
    gate = decide_calls(**gate_inputs(state, runtime, tools, proposed, limit))
    return gated_update(state, gate), gate.summary


def gated_update(state: AssistantState, gate: GateResult) -> Update:
    """The gate's answer as state: the calls this step takes (a refused one with its observation),
    their replay records, and what a paused thread shows."""
    if gate.stop_reason:
        return {"pending_calls": [], "stop_reason": gate.stop_reason}
    pending: list[PendingCall] = []
    for call in gate.now:
        item: PendingCall = {"tool": call.tool, "args": dict(call.args), "n": call.n or 0, "flow": dict(call.flow)}
        if call.error:
            item["error"] = call.error
        pending.append(item)
    update: Update = {"pending_calls": pending, "steps_taken": state.get("steps_taken", 0) + len(pending)}
    update["flow_log"] = [*state.get("flow_log", []), *(dict(c.replay or {}) for c in gate.now)]  # for replay
    shown = [call.prompt for call in gate.now if call.prompt]
    if shown:  # a call that pauses: what it waits for is the thread's last message (Studio, the SDK)
        update["messages"] = [AIMessage(content=text) for text in shown]
    return update


def dispatch(state: AssistantState) -> list[Send] | str:
    """Each pending call to ``execute_tool`` (in parallel when there are several), or the answer."""
    pending = state.get("pending_calls") or []
    if not pending:
        return "draft_answer"
    plan = state.get("plan")
    # The turn's identity goes along: the call may pause and be resumed under another context. The
    # tools of the batch's earlier calls go too: each call serves its own plan step.
    return [Send("execute_tool", {"call": call, "plan": plan, "records": state.get("records", []),
                                  "calls_before": [c["tool"] for c in pending[:i]],
                                  "identity": state.get("identity"), "allowed": state.get("allowed_tools") or []})
            for i, call in enumerate(pending)]


@declare(guards=("loop_guards",))
def observe(state: AssistantState) -> Update:
    """Record the step's observations in call order; stop when the results stall."""
    observed = sorted(state.get("observed") or [], key=lambda o: o["record"]["n"])
    records: list[ToolRecord] = [*state.get("records", []), *(o["record"] for o in observed)]
    traces = [dict(o["trace"]) for o in observed]
    update: Update = {"records": records, "pending_calls": [], "observed": None}
    stall = detect_stall([r["output"] for r in records], changed=[bool(r.get("changed")) for r in records])
    if not stall.allowed:
        update["stop_reason"] = stall.code
        if traces:  # the call whose result completed the stall says so
            traces[-1]["summary"] += "; loop stopped, consecutive observations are nearly identical (stall)"
    update["trace"] = traced(state, *traces)  # type: ignore[arg-type]
    return update


def route_after_observation(state: AssistantState) -> str:
    if state.get("stop_reason") or state.get("intent") == "SIMPLE_TOOL":
        return "draft_answer"
    return "propose_step"

