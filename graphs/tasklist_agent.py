"""Tasklist agent: one controlled planning decision inside a guarded, fixed flow.

    START → read_plan → check_readiness → planning_decision ─┬─ ask_clarification ──────────┐
                                                             ├─ stop_with_boundary_message ─┤
                                                             ├─ read_optional_context ─┐    │
                                                             └─ (proceed_*) ───────────┴─ decide_strategy
    decide_strategy ⇄ [review_strategy] → draft_v1 → validate_v1 → warning_disposition
      ─┬─ nothing to fix now ─────────────────────────────────────────► revision_effect
       └─ fix now → [review_revision] → revise_v2 → validate_v2 ─────► revision_effect
    revision_effect → final → finish → END          (every node may end the run → finish)

Every node asks the state-machine guard (``policies/tasklist_machine.py``) before it acts; every
conditional edge routes by the same table's ``next_action``. Bracketed nodes run only with human
review (``human_review=True`` as a build option or in the run context).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from graphs.tasklist.state import TasklistContext, TasklistInput, TasklistOutput, TasklistState
from nodes.tasklist.common import TasklistDeps, machine_of
from nodes.tasklist.drafting import draft_v1, review_revision, revise_v2, validate_v1, validate_v2, warning_disposition
from nodes.tasklist.intake import GRAPH_VERSION, check_readiness, read_plan
from nodes.tasklist.outcome import final, finish, revision_effect
from nodes.tasklist.planning import ask_clarification, planning_decision, read_optional_context, stop_with_boundary_message
from nodes.tasklist.strategy import decide_strategy, review_strategy
from policies.tasklist_machine import next_action
from policies.tasklist_review import check_review_decision
from runtime.calls import node
from runtime.context import model_set_of
from runtime.models import ModelSet
from runtime.resources import ResourceResolver

NODES = {
    "read_plan": read_plan,
    "check_readiness": check_readiness,
    "planning_decision": planning_decision,
    "ask_clarification": ask_clarification,
    "stop_with_boundary_message": stop_with_boundary_message,
    "read_optional_context": read_optional_context,
    "decide_strategy": decide_strategy,
    "review_strategy": review_strategy,
    "draft_v1": draft_v1,
    "validate_v1": validate_v1,
    "warning_disposition": warning_disposition,
    "review_revision": review_revision,
    "revise_v2": revise_v2,
    "validate_v2": validate_v2,
    "revision_effect": revision_effect,
    "final": final,
    "finish": finish,
}

# Where each node may hand over (its conditional edge's destinations); "finish" is always possible.
ROUTES: Mapping[str, tuple[str, ...]] = {
    "read_plan": ("check_readiness",),
    "check_readiness": ("planning_decision",),
    "planning_decision": ("ask_clarification", "stop_with_boundary_message", "read_optional_context", "decide_strategy"),
    "ask_clarification": (),
    "stop_with_boundary_message": (),
    "read_optional_context": ("decide_strategy",),
    "decide_strategy": ("review_strategy", "draft_v1"),
    "review_strategy": ("decide_strategy", "draft_v1"),
    "draft_v1": ("validate_v1",),
    "validate_v1": ("warning_disposition",),
    "warning_disposition": ("revision_effect", "review_revision", "revise_v2"),
    "review_revision": ("revise_v2", "validate_v2"),
    "revise_v2": ("validate_v2",),
    "validate_v2": ("revision_effect",),
    "revision_effect": ("final",),
    "final": (),
}


def route(state: Mapping[str, Any]) -> str:
    """Every conditional edge: the machine's next action for the current state."""
    return next_action(machine_of(state))


def build_graph(
    models: ModelSet | BaseChatModel | None = None,
    checkpointer: Any = None,
    *,
    human_review: bool = False,
    resolver: ResourceResolver | None = None,
    max_steps: int | None = None,
    **compile_options: Any,
):
    """Compile the tasklist agent.

    ``models``: a ModelSet, one chat model for every role, or None (resolved per run from the context /
    environment).
    ``human_review``: pause at the strategy review and before the automatic revision (needs a
    checkpointer). ``resolver``: where ``docs://`` and ``project://`` resources come from.
    ``max_steps``: tighten the step budget (never above 12, or 20 with human review).
    """
    deps = TasklistDeps(models=model_set_of(models, "tasklist_agent"), resolver=resolver, human_review=human_review, max_steps=max_steps)
    builder = StateGraph(TasklistState, context_schema=TasklistContext, input_schema=TasklistInput, output_schema=TasklistOutput)
    for name, function in NODES.items():
        # Model-calling nodes run sync under invoke and async under ainvoke (runtime/calls.py).
        builder.add_node(name, node(partial(function, deps=deps), name))
    builder.add_edge(START, "read_plan")
    for name, targets in ROUTES.items():
        builder.add_conditional_edges(name, route, [*targets, "finish"])
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="tasklist_agent", **compile_options)


graph = build_graph()


# ------------------------------------------------------------------------------------------ resume


class ResumeError(ValueError):
    """A resume was refused; ``str(error)`` is safe to show. The run is left exactly as it was."""


def pending_review(compiled: Any, config: Mapping[str, Any]) -> dict[str, Any]:
    """The review a paused run waits for (its interrupt payload), or ResumeError."""
    snapshot = compiled.get_state(dict(config))
    if not snapshot.values:
        raise ResumeError("no tasklist run is stored under this thread id")
    if snapshot.values.get("graph_version") != GRAPH_VERSION:
        raise ResumeError("this run was started by a different version of the tasklist agent; it cannot be resumed")
    if not snapshot.interrupts:
        raise ResumeError("this run is not waiting for a review decision (already finished or never paused)")
    payload = snapshot.interrupts[0].value
    if not isinstance(payload, Mapping) or payload.get("kind") not in ("strategy_review", "revision_review"):
        raise ResumeError("this run is paused for something other than a tasklist review")
    return dict(payload)


def resume_command(compiled: Any, config: Mapping[str, Any], decision: Any) -> Command:
    """Check ``decision`` against the pending review's allowed decisions before anything is consumed."""
    payload = pending_review(compiled, config)
    check = check_review_decision(payload["kind"], payload["allowed_decisions"], decision)
    if check.error:
        raise ResumeError(check.error)
    return Command(resume=check.decision)
