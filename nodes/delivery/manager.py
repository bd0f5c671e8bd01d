"""``manager``: one native tool-calling turn of the manager model.

Each turn is offered only the tools the delegation policy allows in the current phase (plan, task
or the review group), asked for in the configured tool-choice style (``policies.delegation.
manager_offer``). What the model proposed is then checked by the delegation policy against the full
rules; the node records the proposal and the policy's verdict, and routes on that verdict: to the
worker, to the review group (one ``Send`` per reviewer), or to ``manager_refused``. A model that cannot
call tools fails closed.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from policies.delegation import PLAN_TOOL, TASK_TOOL, manager_offer
from runtime.calls import ToolTurn
from runtime.steps import attempt
from nodes.delivery.common import DeliveryDeps, call_failed, fail, progress, trace
from nodes.delivery.context import DeliveryContext
from nodes.delivery.prompts import manager_messages
from nodes.delivery.routing import delegation_verdict, ledger, reviewer_sends
from nodes.delivery.state import AfterManager, DeliveryState, ProposedToolCall

NO_TOOL_CALLING = "The manager model cannot call tools; the delivery chain needs native tool calling."
INVALID_ARGS = {"__invalid_arguments__": True}  # makes the policy reject a call whose JSON did not parse


def artifact_lines(state: DeliveryState) -> list[str]:
    """What the manager may know about the artifacts: their kind and the sub-agent's safe summary."""
    lines = []
    for kind in ("plan", "tasks"):
        record = state.get(kind)
        if record:
            lines.append(f"{kind}: {record['result']['status']} — {record['result']['summary_for_manager']}")
    return lines


def proposed_calls(message: Any) -> list[ProposedToolCall]:
    calls = [
        ProposedToolCall(id=str(call.get("id") or ""), name=str(call.get("name") or ""), args=dict(call.get("args") or {}))
        for call in message.tool_calls
    ]
    calls += [
        ProposedToolCall(id=str(call.get("id") or ""), name=str(call.get("name") or ""), args=dict(INVALID_ARGS))
        for call in getattr(message, "invalid_tool_calls", []) or []
    ]
    return calls


def make_manager(deps: DeliveryDeps):
    tools = {tool.name: tool for tool in deps.tools.langchain_tools()}
    if sorted(deps.tools.names) != sorted((PLAN_TOOL, TASK_TOOL, *deps.reviewers.tools)):
        raise ValueError("the manager's scope must hold exactly the plan, task and reviewer sub-agent tools")

    def manager(state: DeliveryState, runtime: Runtime[DeliveryContext]) -> Generator[Any, Any, Command[AfterManager]]:
        turn_number = state.get("manager_turns", 0) + 1
        messages = manager_messages(state["pre_decision"], artifact_lines(state), state.get("delegated", []),
                                    deps.reviewers)
        models = deps.models_for(runtime)
        offer = manager_offer(ledger(state), deps.policy, models.tool_choice)
        outcome = yield from attempt(
            ToolTurn("delivery.manager", messages, models, [tools[name] for name in offer.tools], offer.options)
        )
        if isinstance(outcome.error, NotImplementedError):  # LangChain's answer when a model cannot bind tools
            failed = fail("manager", "tool_calling_unsupported", NO_TOOL_CALLING)
            return Command(update={"manager_turns": turn_number, **failed}, goto="fail_closed")
        if not outcome.ok:
            failed = call_failed("manager", "manager_failed", "The manager model call failed.", outcome)
            return Command(update={"manager_turns": turn_number, **failed}, goto="fail_closed")
        calls = proposed_calls(outcome.value.message)
        known = [c["name"] for c in calls if c["name"] in deps.tools.names]
        unknown = len(calls) - len(known)
        summary = f"turn {turn_number}: proposed {', '.join(known) or 'no registered tool'}"
        if unknown:
            summary += f" and {unknown} unregistered call(s)"
        verdict = delegation_verdict(calls, state, deps.policy)
        update: DeliveryState = {
            "manager_turns": turn_number,
            "pending_calls": calls,
            "delegation": verdict,
            "contract_metrics": dict(outcome.metrics),
            "trace": trace("manager", summary),
        }
        if verdict["next"] != "reviewer":
            return Command(update=update, goto=verdict["next"])
        progress(state).event("delegate-review-group", "running", "Parallel review group", f"{len(calls)} reviewers started")
        return Command(update=update, goto=reviewer_sends(state, calls, deps.reviewers))

    return manager
