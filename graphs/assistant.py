"""The assistant: ordinary chat with chat-scoped tools in a bounded loop that checks itself.

```
START → prepare_turn ─┬─ empty ───────────────────────────────────────────────► empty_request → END
                      ├─ /tasklist <plan> ─────────────────────► tasklist (subgraph) ⟲ review pause → END
                      ├─ /delivery-chain <requirement> ───────────────────────► delivery_chain (subgraph) → END
                      ├─ other /command ──────────────────────────────────────► run_slash_command → END
                      └─ chat → classify_intent ─┬─ QA ─────────────────────────► draft_answer
                                                 └─ SIMPLE_TOOL | COMPLEX → propose_step
propose_step ─[guards: budget, repeat, malformed; ≤3 read-only calls or 1 pausing]─┬─ Send ×1..3 → execute_tool
                                                                                  └─ done / stopped → draft_answer
execute_tool ─[side effect: interrupt for approval · ask_user: interrupt to ask]─► observe
observe ─┬─ next ──────────────────────────────────────────────────────► propose_step
         ├─ a plan step failed twice → revise_plan ─┬─ a step is left ─► propose_step
         │                                          └─ none is left ───► draft_answer
         └─ stall / SIMPLE_TOOL / stopped / every step done, one skipped ─► draft_answer
draft_answer → check_and_reply ─┬─ findings, once (check → act) ─► propose_step
                                ├─ COMPLEX → reflect ─┬─ topic succeeded 3×, review run → draft_skill
                                │                     └─ else → END
                                └─ else → END
draft_skill ─┬─ drafted → review_skill_draft (interrupt: approve | edit | reject) → END
             └─ not due → END
```
The pipelines are subgraph nodes: Studio draws them, their progress streams with
``subgraphs=True``, and a tasklist review pause pauses this thread until it is resumed here. Other
slash input is answered by rule. The sub-agents of the delivery chain are never visible here (the
tools come from ``registry.for_scope("chat")`` only), and the user's MCP tools (``mcp_config``,
``REINS_MCP_CONFIG`` or the run's context) exist only here. Memory: the conversation window lives in
the checkpointed ``messages`` (dropped turns folded into a rolling summary); long-term notes live in
the LangGraph store, recalled by its semantic index and by keywords. Skills: their index is in every
intent and step prompt; ``load_skill`` brings one's instructions in as an observation.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from reins.nodes.assistant import routing
from reins.nodes.assistant.answer import check_and_reply, draft_answer, route_after_check
from reins.nodes.assistant.approval import asked_again, resume_refusal
from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import AssistantDeps, PipelineRoute, pipeline_context
from reins.nodes.assistant.executor import dispatch, observe, propose_step
from reins.nodes.assistant.identity import as_turn_user
from reins.nodes.assistant.intent import classify_intent
from reins.nodes.assistant.memory import empty_request, prepare_turn, reflect
from reins.nodes.assistant.pipeline import make_pipeline_node, node_name
from reins.nodes.assistant.replan import revise_plan, route_after_revision, route_after_tool
from reins.nodes.assistant.routing import routed
from reins.nodes.assistant.skill_drafts import draft_skill, review_skill_draft, route_after_draft, route_after_reflect
from reins.nodes.assistant.slash import run_slash_command
from reins.nodes.assistant.state import AssistantInput, AssistantOutput, AssistantState
from reins.nodes.assistant.tool_call import execute_tool
from reins.policies.assistant.pipeline_reply import delivery_outcome, delivery_spent, tasklist_outcome, tasklist_spent
from reins.policies.assistant.slash_commands import DELIVERY_CHAIN, TASKLIST
from reins.runtime.execution.calls import inline, node
from reins.runtime.config.context import model_set_of
from reins.runtime.persistence.embeddings import memory_index
from reins.runtime.llm.models import ModelSet
from reins.runtime.tools.mcp_tools import McpSource
from reins.runtime.tools.registry import ToolRegistry
from reins.runtime.tools.toolbox import chat_toolset
from reins.runtime.execution.user_input import guard_input

__all__ = ["AssistantContext", "AssistantState", "build_graph", "default_pipelines", "graph"]

_DEFAULT_STORE: Any = object()


# ------------------------------------------------------------------------------------ pipelines


def _build_tasklist(models: ModelSet | None) -> Any:
    from reins.graphs.tasklist_agent import build_graph as build_tasklist  # lazy: the pipeline may be absent

    return build_tasklist(models=models)


def _build_delivery(models: ModelSet | None) -> Any:
    from reins.graphs.delivery_chain import build_graph as build_delivery  # lazy: the pipeline may be absent

    return build_delivery(models=models)


def _tasklist_context(context: AssistantContext | None) -> dict[str, Any]:
    return {**pipeline_context(context), "human_review": bool(getattr(context, "human_review", False))}


def default_pipelines() -> dict[str, PipelineRoute]:
    return {
        TASKLIST: PipelineRoute(
            build=_build_tasklist,
            make_input=lambda argument, text: {"request": text},
            read_outcome=tasklist_outcome,
            make_context=_tasklist_context,
            pauses=True,
            read_spent=tasklist_spent,
        ),
        DELIVERY_CHAIN: PipelineRoute(
            build=_build_delivery,
            make_input=lambda argument, text: {"requirement": argument},
            read_outcome=delivery_outcome,
            read_spent=delivery_spent,
        ),
    }


# ------------------------------------------------------------------------------------ builder


def build_graph(
    models: ModelSet | BaseChatModel | None = None,
    checkpointer: Any = None,
    *,
    registry: ToolRegistry | None = None,
    store: BaseStore | None = _DEFAULT_STORE,
    pipelines: Mapping[str, PipelineRoute] | None = None,
    mcp_config: McpSource = None,
) -> Any:
    """Compile the assistant.

    ``models``: a ModelSet, one chat model for every role, or None (resolved at run time from the
    context / environment).
    ``registry``: where the chat tools come from (only scope ``chat`` is used).
    ``store``: long-term memory (an ``InMemoryStore`` with a semantic index unless given; ``None``
    disables it).
    ``pipelines``: slash-command routes (default: the tasklist agent and the delivery chain).
    ``mcp_config``: the user's MCP servers (a path or the ``{"mcpServers": …}`` dict; default
    ``REINS_MCP_CONFIG``, read at run time), offered as chat tools ``<server>__<tool>``; a server
    that fails to start is left out; an invalid configuration raises ``McpConfigError``.

    Example: ``build_assistant(models=OfflineModel()).invoke({"messages": [("user", "what is 6*7?")]}, {"configurable": {"thread_id": "t1"}})``
    """
    # An explicit configuration loads now (its errors surface here); REINS_MCP_CONFIG loads when a
    # run first needs tools, so importing this module never starts a server.
    tools = chat_toolset(registry, mcp_config, from_env=False)
    routes = default_pipelines() if pipelines is None else pipelines
    deps = AssistantDeps(models=model_set_of(models, "assistant"), tools=tools, pipelines=routes,
                         mcp_from_env=mcp_config is None)
    subgraphs = {}
    for command, route in routes.items():
        try:
            subgraphs[command] = route.build(deps.models)  # once; models=None resolves per run from the context
        except ImportError:  # the pipeline is not installed: /command answers that it is unavailable
            continue

    builder = StateGraph(
        AssistantState, context_schema=AssistantContext, input_schema=AssistantInput, output_schema=AssistantOutput
    )
    # Model- and store-calling nodes run sync under invoke and async under ainvoke; quick rule-only
    # nodes run on the event loop under ainvoke (runtime/execution/calls.py). Slash commands and tool
    # execution may block: they keep LangGraph's executor thread. Every node that decides where the
    # turn goes routes with Command (nodes/assistant/routing.py); ``destinations`` draws its branches.
    turn_start = routed(prepare_turn, partial(routing.route_input, pipelines=subgraphs))
    builder.add_node("prepare_turn", node(turn_start, "prepare_turn", deps=deps),
                     destinations=routing.after_turn_start(subgraphs))
    builder.add_node("empty_request", inline(empty_request))
    builder.add_node("run_slash_command", node(run_slash_command, deps=deps))
    # The pipelines are subgraphs: drawn by Studio, streamed with subgraphs=True, paused and resumed
    # on the assistant's thread.
    for command, subgraph in subgraphs.items():
        name = node_name(command)  # a review pause is announced, then waited for, in the node's next step
        again = (name, END) if routes[command].pauses else None
        builder.add_node(name, make_pipeline_node(command, routes[command], subgraph), destinations=again)
    builder.add_node("classify_intent", node(routed(classify_intent, routing.route_intent), "classify_intent", deps=deps),
                     destinations=routing.AFTER_INTENT)
    builder.add_node("propose_step", node(routed(propose_step, dispatch), "propose_step", deps=deps),
                     destinations=routing.AFTER_PROPOSAL)
    # The nodes that read the user (their memory, their tools) act for the one the turn started
    # with, also when a pause is answered from another process or context.
    builder.add_node("execute_tool", node(as_turn_user(execute_tool), deps=deps))
    builder.add_node("observe", inline(routed(observe, route_after_tool), "observe"),
                     destinations=routing.AFTER_OBSERVATION)
    builder.add_node("revise_plan", node(routed(revise_plan, route_after_revision), "revise_plan", deps=deps),
                     destinations=routing.AFTER_REVISION)
    builder.add_node("draft_answer", node(draft_answer, deps=deps))
    builder.add_node("check_and_reply", inline(routed(check_and_reply, route_after_check), "check_and_reply", deps=deps),
                     destinations=routing.AFTER_CHECK)
    builder.add_node("reflect", node(routed(as_turn_user(reflect), route_after_reflect), "reflect", deps=deps),
                     destinations=routing.AFTER_REFLECTION)
    builder.add_node("draft_skill", node(routed(as_turn_user(draft_skill), route_after_draft), "draft_skill", deps=deps),
                     destinations=routing.AFTER_SKILL_DRAFT)
    builder.add_node("review_skill_draft", as_turn_user(review_skill_draft))

    builder.add_edge(START, "prepare_turn")
    builder.add_edge("empty_request", END)
    builder.add_edge("run_slash_command", END)
    for command in subgraphs:
        builder.add_edge(node_name(command), END)
    builder.add_edge("execute_tool", "observe")
    builder.add_edge("draft_answer", "check_and_reply")
    builder.add_edge("review_skill_draft", END)

    memory = InMemoryStore(index=memory_index()) if store is _DEFAULT_STORE else store
    compiled = builder.compile(checkpointer=checkpointer, store=memory, name="assistant")
    # The messages are redacted, and a resume value checked against the pending pause, before
    # LangGraph stores them.
    return guard_input(compiled, messages_key="messages", resume_check=resume_refusal, asked_again=asked_again)


graph = build_graph(store=None)  # LangGraph Server supplies its own checkpointer and store
