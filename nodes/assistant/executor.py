"""The bounded tool loop (D of PDCA): the model proposes tool calls, the rules decide which run and
how, the runtime runs them and records the observations.

``propose_step`` reads the model's turn (a turn without a native call whose text is exactly calls to
the offered tools counts as those calls, as in the delivery manager; ``REINS_TEXT_TOOL_CALLS``): a
malformed call (``invalid_tool_calls``, an unknown tool,
arguments that break the tool's schema) comes back as one observation of ``{path, code}`` pairs; a
valid one passes the loop guards (budget and repeat count every call) and the batching rule (up to
three read-only calls together, a pausing call alone). ``observe`` records what the calls gave,
in order, once they all finished.
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
from reins.nodes.assistant.data_flow import (FLOW, execution_of, flow_decision, flow_inputs, flow_records, pause_text,
                                       stored, turn_record)
from reins.nodes.assistant.deps import AssistantDeps, progress_for
from reins.nodes.assistant.prompts import step_messages
from reins.nodes.assistant.state import AssistantState, NodeSteps, PendingCall, ToolRecord, Update, traced
from reins.policies.tools.loop_guards import (
    MAX_STEPS,
    REPEATED_CALL,
    STEP_LIMIT,
    call_signature,
    check_repeat,
    check_step_budget,
    detect_stall,
)
from reins.policies.text.redaction import redact
from reins.policies.tools.approval import Approval
from reins.policies.tools.calls import batch, question_allowed
from reins.runtime.execution.calls import ToolTurn
from reins.runtime.tools.chat_tools import ASK_USER
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
    budget = check_step_budget(steps_taken, max_steps(state))
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
        update, step.summary = _proposal(state, recovered or message, tools, *flow_inputs(runtime))
        if recovered:
            step.summary += " (written as text)"
    return {**update, "trace": traced(state, step.trace(recovered_from_text=True if recovered else None))}


def _proposal(state: AssistantState, message: AIMessage, tools: ScopedTools, rules: tuple = (),
              allow_list: tuple[str, ...] = ()) -> tuple[Update, str]:
    """What the loop does with the model's tool-calling turn, and a summary of what and why."""
    records = state.get("records", [])
    steps_taken = state.get("steps_taken", 0)
    first = len(records) + 1
    issues = malformed_issues(message, tools)
    if issues:  # one observation for the model, within the budget
        names = [str(c.get("name", ""))[:64] for c in [*message.tool_calls, *(message.invalid_tool_calls or [])]]
        available = ", ".join(t.name for t in tools if t.runnable or t.asks_user)
        error = f"{MALFORMED}: {json.dumps(issues, ensure_ascii=False)}; available tools: {available}"
        call: PendingCall = {"tool": names[0] if names else "", "args": {}, "error": error, "n": first}
        return {"pending_calls": [call], "steps_taken": steps_taken + 1}, f"{MALFORMED}: {len(issues)} issue(s)"
    proposed = parse_step(message)
    if proposed.finished:
        return {"pending_calls": []}, "the model made no tool call (done)"
    calls = list(proposed.calls)
    remaining = max_steps(state) - steps_taken
    # Where each sink value came from may make a call pause (or a rule refuse it): decided before batching.
    turn = turn_record(state, tools, rules, allow_list=allow_list)
    flows = [flow_decision(approval_of(tools, c.tool), tools.get(c.tool), c.args, turn) for c in calls]
    count = min(batch(["ask" if f.execution == "refuse" else f.execution for f in flows]), remaining)
    chosen, summary = calls[:count], f"proposed {', '.join(c.tool for c in calls[:count])}"
    if len(calls) > count:
        summary += f"; {len(calls) - count} more call(s) left for later steps"
    signatures = [call_signature(r["tool"], r["args"]) for r in records]
    pending: list[PendingCall] = []
    asked = sum(1 for r in records if r["tool"] == ASK_USER)
    for offset, call in enumerate(chosen):
        signature = call_signature(call.tool, call.args)
        if not check_repeat(signatures, signature).allowed:
            summary += "; loop stopped, a call was requested a third time with the same arguments"
            return {"pending_calls": [], "stop_reason": REPEATED_CALL}, summary
        signatures.append(signature)
        item: PendingCall = {"tool": call.tool, "args": dict(call.args), "n": first + offset}
        item[FLOW] = stored(flows[offset])  # type: ignore[literal-required]
        if flows[offset].execution == "refuse":
            item["error"] = "refused: " + "; ".join(flows[offset].reasons)
        if call.tool == ASK_USER:
            if not question_allowed(asked):
                item["error"] = "question limit reached: at most 2 questions per turn; answer with what you have"
            asked += 1
        pending.append(item)
    update: Update = {"pending_calls": pending, "steps_taken": steps_taken + len(pending)}
    update["flow_log"] = [*state.get("flow_log", []), *flow_records(pending, tools, flows)]  # for replay
    shown = [pause_message(item, tools) for item in pending if "error" not in item]
    if any(shown):  # a call that pauses: what it waits for is the thread's last message (Studio, the SDK)
        update["messages"] = [AIMessage(content=text) for text in shown if text]
    return update, summary


def pause_message(call: PendingCall, tools: ScopedTools) -> str:
    """What a paused thread shows a person: ask_user's question, or the call waiting for approval;
    "" for a call that runs without asking."""
    approval = execution_of(call, approval_of(tools, call["tool"]))  # the data-flow hook may ask
    if approval == "question":
        options = call["args"].get("options") or []
        listed = "".join(f"\n{number}. {option}" for number, option in enumerate(options, 1))
        return f"{call['args'].get('question', '')}{listed}"
    if approval == "ask":
        arguments = json.dumps(call["args"], ensure_ascii=False)
        text = f"Before I run {call['tool']} with {arguments}, I need your approval: approve, reject or edit."
        details = pause_text(call)
        return f"{text}\n{details}" if details else text
    return ""


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
                                  "identity": state.get("identity")}) for i, call in enumerate(pending)]


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

