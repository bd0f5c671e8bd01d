"""``manager``: one tool-calling turn of the manager model.

Each turn is offered only the tools the delegation policy allows in the current phase (plan, task
or the review group), asked for in the configured tool-choice style (``reins.policies.delivery.delegation.
manager_offer``). A turn without a native call whose text is exactly calls to the offered tools
(``reins.policies.models.text_tool_calls``; ``REINS_TEXT_TOOL_CALLS=recover``, the default) proposes those calls
instead, and the trace says so. What the model proposed is then checked by the delegation policy
against the full rules; the node records the proposal and the policy's verdict, and routes on that
verdict: to the worker, to the review group (one ``Send`` per reviewer), or to ``manager_refused``.
A note over its bound is cut to the bound first (it is advisory, ``reins.policies.models.manager_reask``), and the
trace says so. A re-ask of a refused turn tells the model the refusal's reason as ``{path, code}``
pairs and samples at a higher temperature (and, after a cut-off, with twice the output bound once).
A model that cannot call tools fails closed.
"""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from reins.policies.delivery.delegation import manager_offer
from reins.policies.models.manager_reask import UNPARSED_ARGS, fit_advisory_args
from reins.policies.models.second_attempt import reask_temperature
from reins.policies.models.text_tool_calls import recover_text_tool_calls
from reins.policies.text.truncation import TRUNCATED, is_truncated
from reins.runtime.execution.calls import ToolTurn
from reins.runtime.llm.messages import message_text
from reins.runtime.llm.models import ModelSet
from reins.runtime.execution.steps import attempt, recorded_step
from reins.schemas.delivery import WORK_ARTIFACTS
from reins.nodes.delivery.common import DeliveryDeps, call_failed, fail, progress
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.escalation import escalating, turn_models
from reins.nodes.delivery.prompts import manager_messages
from reins.nodes.delivery.routing import delegation_verdict, ledger, refusals_in_turn, reviewer_sends
from reins.nodes.delivery.state import AfterManager, DeliveryState, ManagerProposal, ProposedToolCall

NO_TOOL_CALLING = "The manager model cannot call tools; the delivery chain needs native tool calling."
INVALID_ARGS = dict(UNPARSED_ARGS)  # makes the policy reject a call whose JSON did not parse


def artifact_lines(state: DeliveryState) -> list[str]:
    """What the manager may know about the artifacts: their kind and the sub-agent's safe summary."""
    lines = []
    for kind in WORK_ARTIFACTS:
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


def calls_from_text(message: Any, offered: tuple[str, ...]) -> list[ProposedToolCall]:
    """The calls a turn without a native call wrote as text (none when its text is anything else)."""
    found = recover_text_tool_calls(message_text(message), offered) or ()
    return [ProposedToolCall(id=f"text-{n}", name=call.name, args=dict(call.args)) for n, call in enumerate(found, 1)]


def proposal_record(turn: int, state: DeliveryState, calls: list[ProposedToolCall], cut_off: bool,
                    verdict: Any) -> ManagerProposal:
    """The turn as the policy saw it, kept so a replay can re-decide it without the model."""
    before = ledger(state)
    return ManagerProposal(turn=turn, executed=list(before.executed), artifacts=sorted(before.artifacts),
                           calls=calls, cut_off=cut_off, verdict=verdict)


def fitted_calls(calls: list[ProposedToolCall]) -> tuple[list[ProposedToolCall], tuple[str, ...]]:
    """The calls with their advisory arguments cut to their bounds, and the fields cut."""
    fitted, cut = [], []
    for call in calls:
        args, names = fit_advisory_args(call["args"])
        fitted.append(ProposedToolCall(id=call["id"], name=call["name"], args=args))
        cut += [name for name in names if name not in cut]
    return fitted, tuple(cut)


def refused_issues(state: DeliveryState) -> list[dict[str, str]]:
    """The issues of this turn's latest refusal, when the turn is being asked again."""
    if not refusals_in_turn(state):
        return []
    return list(state["manager_refusals"][-1].get("issues") or [])


def reask_options(state: DeliveryState, models: ModelSet) -> tuple[dict[str, Any], bool]:
    """Request options of a re-asked turn: a hotter temperature; and whether it gets more room (twice
    the output bound once, through the role policy every request carries) after a cut-off."""
    if not refusals_in_turn(state):
        return {}, False
    policy = models.policy("manager")
    hotter = {"temperature": reask_temperature(policy.temperature, policy.reask_temperature_step)}
    return hotter, state["manager_refusals"][-1]["code"] == TRUNCATED


@declare(model=True, guards=("delegation",))
def manager(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterManager]]:
    turn_number = state.get("manager_turns", 0) + 1
    messages = manager_messages(state["pre_decision"], artifact_lines(state), state.get("delegated", []),
                                deps.reviewers, refused=refused_issues(state))
    models = turn_models(state, deps.models_for(runtime))
    offer = manager_offer(ledger(state), deps.policy, models.tool_choice)
    hotter, more_room = reask_options(state, models) if not escalating(state) else ({}, False)
    options = {**offer.options, **hotter}
    with recorded_step(progress(state), "manager", f"Manager turn {turn_number}") as step:
        outcome = yield from attempt(
            ToolTurn("delivery.manager", messages, models, [deps.manager_tools[name] for name in offer.tools], options,
                     more_room=more_room)
        )
        if isinstance(outcome.error, NotImplementedError):  # LangChain's answer when a model cannot bind tools
            step.fail(f"turn {turn_number}: the model cannot call tools")
            failed = fail("manager", "tool_calling_unsupported", NO_TOOL_CALLING)
            return Command(update={"manager_turns": turn_number, **failed}, goto="fail_closed")
        if not outcome.ok:
            step.fail(f"turn {turn_number}: the model call failed")
            failed = call_failed("manager", "manager_failed", "The manager model call failed.", outcome)
            return Command(update={"manager_turns": turn_number, **failed}, goto="fail_closed")
        message = outcome.value
        calls = proposed_calls(message)
        recovered = not calls and models.text_tool_calls == "recover"
        if recovered:
            calls = calls_from_text(message, offer.tools)
            recovered = bool(calls)
        calls, cut = fitted_calls(calls)
        known = [c["name"] for c in calls if c["name"] in deps.tools.names]
        unknown = len(calls) - len(known)
        step.summary = f"turn {turn_number}: proposed {', '.join(known) or 'no registered tool'}"
        if unknown:
            step.summary += f" and {unknown} unregistered call(s)"
        if recovered:
            step.summary += " (written as text)"
        if cut:
            step.summary += f"; {', '.join(cut)} cut to its bound"
        cut_off = is_truncated(message.response_metadata)
        verdict = delegation_verdict(calls, state, deps.policy, cut_off=cut_off)
        if verdict["violation"]:
            step.summary += f"; refused: {verdict['violation']['code']}"
    update: DeliveryState = {
        "manager_turns": turn_number,
        "pending_calls": calls,
        "delegation": verdict,
        "manager_proposals": [proposal_record(turn_number, state, calls, cut_off, verdict)],
        "trace": [step.trace(recovered_from_text=True if recovered else None)],
    }
    if verdict["next"] != "reviewer":
        return Command(update=update, goto=verdict["next"])
    progress(state).event("delegate-review-group", "running", "Parallel review group", f"{len(calls)} reviewers started")
    return Command(update=update, goto=reviewer_sends(state, calls, deps.reviewers))
