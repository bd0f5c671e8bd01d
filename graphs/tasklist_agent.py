"""Tasklist agent: one controlled planning decision inside a guarded, fixed flow.

    START → read_plan → check_readiness → planning_decision ─┬─ ask_clarification ──────────┐
                                                             ├─ stop_with_boundary_message ─┤
                                                             ├─ read_optional_context ─┐    │
                                                             └─ (proceed_*) ───────────┴─ decide_strategy
    decide_strategy ⇄ [review_strategy] → draft_v1 → validate_v1 → warning_disposition
      ─┬─ nothing to fix now ─────────────────────────────────────────► revision_effect
       └─ fix now → [review_revision] → revise_v2 → validate_v2 ─────► revision_effect
    revision_effect → final → finish → END          (every node may end the run → finish)

Every node is a step wrapped by ``guarded`` (``nodes/tasklist/steps.py``): it asks the state-machine
guard (``policies/tasklist/machine.py``) before it acts. The nodes, the edges and the routing rule
behind every conditional edge (``next_action``) all come from that machine's one table. Bracketed
nodes run only with human review (``human_review=True`` as a build option or in the run context).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from reins.nodes.tasklist.context import TasklistContext
from reins.nodes.tasklist.state import ReviewRequest, TasklistInput, TasklistOutput, TasklistState
from reins.nodes.tasklist.stages import STEPS
from reins.nodes.tasklist.common import TasklistDeps, machine_of
from reins.nodes.tasklist.intake import GRAPH_VERSION
from reins.nodes.tasklist.steps import nodes_by_action
from reins.policies.tasklist.machine import entry_action, exits, next_action, routes
from reins.policies.tasklist.review import check_review_decision
from reins.runtime.execution.calls import inline, node
from reins.runtime.config.context import model_set_of
from reins.runtime.llm.models import ModelSet
from reins.runtime.resources import ResourceResolver
from reins.runtime.execution.user_input import guard_input

# One node per action of the machine's table, from the steps the stages list; the edges are the table's too.
NODES = nodes_by_action(STEPS)


def route(state: TasklistState) -> str:
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
    checkpointer: its own, or the parent graph's when it runs as a subgraph; a run with neither is
    refused before any step). ``resolver``: where ``docs://`` and ``project://`` resources come from.
    ``max_steps``: tighten the step budget (never above the one derived from the machine's table:
    its longest valid run, 12 steps; 20 with human review).

    Example: ``build_tasklist_agent(models=OfflineModel()).invoke({"request": "/tasklist docs://versions/v0.2.0-ready.md"})``
    """
    deps = TasklistDeps(models=model_set_of(models, "tasklist_agent"), resolver=resolver, human_review=human_review, max_steps=max_steps)
    builder = StateGraph(TasklistState, context_schema=TasklistContext, input_schema=TasklistInput, output_schema=TasklistOutput)
    for name, function in NODES.items():
        # A step that waits on a model or reads a file is a generator: sync under invoke; under
        # ainvoke the model call is awaited and the file read runs in a worker thread. Every other
        # step is rules, state shaping or a review pause: under ainvoke it runs on the event loop,
        # not in an executor thread (runtime/execution/calls.py).
        wrap = node if inspect.isgeneratorfunction(function) else inline
        builder.add_node(name, wrap(function, name, deps=deps))
    builder.add_edge(START, entry_action())
    for name, targets in routes().items():
        builder.add_conditional_edges(name, inline(route, edge=True), list(targets))
    for name in exits():
        builder.add_edge(name, END)
    compiled = builder.compile(checkpointer=checkpointer, name="tasklist_agent", **compile_options)
    # The input is checked and redacted before LangGraph stores it; a run that pauses for review
    # (built so, or asked for in the context) needs a checkpointer then, not at build time: as a
    # subgraph it inherits the parent's.
    return guard_input(compiled, ("request", "plan_uri"), pause_key="human_review", pauses=human_review)


graph = build_graph()


# ------------------------------------------------------------------------------------------ resume


class ResumeError(ValueError):
    """A resume was refused; ``str(error)`` is safe to show. The run is left exactly as it was."""


def pending_review(compiled: Any, config: Mapping[str, Any]) -> ReviewRequest:
    """The review a paused run waits for (its interrupt payload), or ResumeError.

    Example: ``pending_review(graph, {"configurable": {"thread_id": "t1"}})["allowed_decisions"]``
    """
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping) or not configurable.get("thread_id"):
        raise ResumeError('name the run to resume: config {"configurable": {"thread_id": "<thread id>"}}')
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
    return ReviewRequest(**payload)  # type: ignore[typeddict-item]  # checked above: a tasklist review


def resume_command(compiled: Any, config: Mapping[str, Any], decision: Any) -> Command:
    """Check ``decision`` against the pending review's allowed decisions before anything is consumed.

    Example: ``graph.invoke(resume_command(graph, config, {"type": "approve"}), config)``
    """
    payload = pending_review(compiled, config)
    check = check_review_decision(payload["kind"], payload["allowed_decisions"], decision)
    if check.error:
        raise ResumeError(check.error)
    return Command(resume=check.decision)
