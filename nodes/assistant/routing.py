"""The assistant's routing: every node that decides where the turn goes routes with ``Command``.

``routed(node, route)`` is that node: its update, and ``Command(goto=route(...))`` read on the state
as the update leaves it, so no edge reads state again after the node wrote it. The graph declares
each node's ``destinations`` (the tuples below) and Studio draws its branches from them. The routes
are pure functions of state; they read plain keys only (none kept by a reducer), so the state as
the update leaves it is the state with the update's keys replaced.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, Literal, get_args

from langgraph.types import Command, Send

from reins.nodes.assistant.pipeline import node_name
from reins.nodes.assistant.slash import is_slash
from reins.nodes.assistant.state import AssistantState
from reins.policies.assistant.slash_commands import pipeline_to_run

Route = Callable[[AssistantState], "str | list[Send]"]

# Where each deciding node may send the turn (besides the pipelines of ``after_turn_start``).
# ("__end__" is LangGraph's END.)
AfterIntent = Literal["draft_answer", "propose_step"]
AfterProposal = Literal["execute_tool", "draft_answer"]
AfterObservation = Literal["propose_step", "revise_plan", "draft_answer"]
AfterRevision = Literal["propose_step", "draft_answer"]
AfterCheck = Literal["reflect", "propose_step", "__end__"]
AfterReflection = Literal["draft_skill", "__end__"]
AfterSkillDraft = Literal["review_skill_draft", "__end__"]
AFTER_INTENT: tuple[str, ...] = get_args(AfterIntent)
AFTER_PROPOSAL: tuple[str, ...] = get_args(AfterProposal)
AFTER_OBSERVATION: tuple[str, ...] = get_args(AfterObservation)
AFTER_REVISION: tuple[str, ...] = get_args(AfterRevision)
AFTER_CHECK: tuple[str, ...] = get_args(AfterCheck)
AFTER_REFLECTION: tuple[str, ...] = get_args(AfterReflection)
AFTER_SKILL_DRAFT: tuple[str, ...] = get_args(AfterSkillDraft)


def after_turn_start(pipelines: Mapping[str, Any]) -> tuple[str, ...]:
    """Where a turn may go once it has started: the pipelines are the installed ones."""
    return ("empty_request", "run_slash_command", *(node_name(command) for command in pipelines), "classify_intent")


def route_input(state: AssistantState, *, pipelines: Mapping[str, Any]) -> str:
    """An empty request, a pipeline's slash command, another slash command, or chat."""
    if not state.get("request") or state.get("input_refusal"):
        return "empty_request"
    if not is_slash(state):
        return "classify_intent"
    command = pipeline_to_run(state["request"], pipelines)
    return node_name(command) if command else "run_slash_command"


def route_intent(state: AssistantState) -> str:
    return "draft_answer" if state.get("intent") == "QA" else "propose_step"


def routed(node: Callable[..., Any], route: Route) -> Callable[..., Any]:
    """``node`` (a plain function or a generator of requests, as ``reins.runtime.execution.calls`` runs it) routing
    with ``Command``: its update, and where ``route`` sends the turn from there."""

    def command(state: AssistantState, update: Any) -> Command:
        return Command(update=update, goto=route({**state, **(update or {})}))  # type: ignore[typeddict-item]

    if inspect.isgeneratorfunction(node):

        @wraps(node)
        def routed_steps(state: AssistantState, *args: Any, **kwargs: Any) -> Any:
            return command(state, (yield from node(state, *args, **kwargs)))

        return routed_steps

    @wraps(node)
    def routed_node(state: AssistantState, *args: Any, **kwargs: Any) -> Command:
        return command(state, node(state, *args, **kwargs))

    return routed_node
