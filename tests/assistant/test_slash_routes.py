"""Slash routes: /help, unknown commands, and the two pipelines run as subgraphs."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph

from reins.graphs.assistant import build_graph, default_pipelines
from reins.nodes.assistant.deps import PipelineRoute
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from tests.assistant.helpers import chat_registry


class _Io(TypedDict, total=False):
    request: str
    requirement: str
    final_decision: str
    summary: str
    run_status: str
    report: str


def _fake_pipeline(seen: list[dict[str, Any]], output: dict[str, Any]):
    def run(state: _Io) -> dict[str, Any]:
        seen.append(dict(state))
        return output

    builder = StateGraph(_Io)
    builder.add_node("run", run)
    builder.add_edge(START, "run")
    builder.add_edge("run", END)
    return builder.compile()


def _routes(seen: list, tasklist_output: dict, delivery_output: dict, built_with: list) -> dict[str, PipelineRoute]:
    defaults = default_pipelines()

    def builder(output):
        def build(models):
            built_with.append(models)
            return _fake_pipeline(seen, output)

        return build

    return {
        name: PipelineRoute(build=builder(output), make_input=route.make_input, read_outcome=route.read_outcome)
        for (name, route), output in zip(defaults.items(), (tasklist_output, delivery_output), strict=True)
    }


def _ask(graph, text: str) -> dict[str, Any]:
    return graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": "s"}})


@pytest.fixture
def offline_models() -> ModelSet:
    return ModelSet.uniform(OfflineModel())


def test_the_slash_routes_hand_the_pipelines_their_input_and_return_their_summaries(offline_models):
    seen: list[dict[str, Any]] = []
    built_with: list[Any] = []
    report = "# Delivery report\n\n## Summary\n\nTwo phases, four tasks.\n\n## Plan\n\nlong plan body"
    routes = _routes(
        seen,
        {"final_decision": "final_with_manual_review_items", "summary": "6 tasks, 1 manual item"},
        {"run_status": "needs_review", "report": report},
        built_with,
    )
    graph = build_graph(models=offline_models, registry=chat_registry(), pipelines=routes)

    tasklist = _ask(graph, "/tasklist docs://versions/v0.2.0-ready.md")
    assert seen[-1] == {"request": "/tasklist docs://versions/v0.2.0-ready.md"}
    assert tasklist["reply"] == "/tasklist finished with status final_with_manual_review_items.\n\n6 tasks, 1 manual item"
    assert tasklist["pipeline"]["status"] == "final_with_manual_review_items"
    assert tasklist["answer"]["verdict"] == "partial"

    delivery = _ask(graph, "/delivery-chain Show a banner when the request limit is reached")
    assert seen[-1] == {"requirement": "Show a banner when the request limit is reached"}
    assert delivery["reply"] == "/delivery-chain finished with status needs_review.\n\nTwo phases, four tasks."
    assert "long plan body" not in delivery["reply"]
    assert built_with == [offline_models, offline_models]  # the pipelines get the assistant's models


def test_a_failing_pipeline_is_reported_not_raised(offline_models):
    def explode(state: _Io) -> dict[str, Any]:
        raise RuntimeError("database password=hunter2 unreachable")

    def broken(models):
        builder = StateGraph(_Io)
        builder.add_node("run", explode)
        builder.add_edge(START, "run")
        builder.add_edge("run", END)
        return builder.compile()

    routes = {**default_pipelines()}
    routes["tasklist"] = PipelineRoute(broken, routes["tasklist"].make_input, routes["tasklist"].read_outcome)
    graph = build_graph(models=offline_models, registry=chat_registry(), pipelines=routes)
    result = _ask(graph, "/tasklist docs://versions/v0.2.0-ready.md")
    assert result["reply"].startswith("The /tasklist pipeline failed:")
    assert "hunter2" not in result["reply"]
    assert result["pipeline"]["status"] == "failed" and result["answer"]["verdict"] == "failure"


@pytest.mark.parametrize(
    ("text", "status", "reply_start"),
    [
        ("/help", "help", "Commands:"),
        ("/frobnicate now", "unknown_command", "Unknown command /frobnicate."),
        ("/delivery-chain", "bad_input", "Usage: /delivery-chain <requirement>"),
        ("/tasklist", "bad_input", "Usage: /tasklist docs://versions/<plan>.md"),
    ],
)
def test_help_unknown_and_usage_are_answered_by_rule(offline_models, text, status, reply_start):
    graph = build_graph(models=offline_models, registry=chat_registry(), pipelines={})
    result = _ask(graph, text)
    assert result["pipeline"]["status"] == status
    assert result["reply"].startswith(reply_start)
    assert result["intent"] is None  # no classification, no model


def test_a_missing_pipeline_gets_a_clear_answer(offline_models):
    graph = build_graph(models=offline_models, registry=chat_registry(), pipelines={})
    result = _ask(graph, "/delivery-chain add SSO")
    assert result["reply"] == "The /delivery-chain pipeline is not available in this installation."


def test_the_real_pipelines_run_as_subgraphs_on_the_offline_model(offline_models):
    graph = build_graph(models=offline_models, registry=chat_registry())
    namespaces: set[str] = set()
    final: dict[str, Any] = {}
    for namespace, mode, chunk in graph.stream(
        {"messages": [HumanMessage(content="/tasklist docs://versions/v0.2.0-ready.md")]},
        {"configurable": {"thread_id": "real"}},
        stream_mode=["updates", "values"],
        subgraphs=True,
    ):
        if namespace and mode == "updates":
            namespaces.update(f"{namespace[0].split(':')[0]}/{node}" for node in chunk)
        if not namespace and mode == "values":
            final = chunk
    assert {"tasklist/read_plan", "tasklist/check_readiness"} <= namespaces
    assert final["pipeline"]["command"] == "tasklist"
    assert final["pipeline"]["status"] in ("final", "final_with_manual_review_items")
    assert final["reply"].startswith(f"/tasklist finished with status {final['pipeline']['status']}.")

    delivery = _ask(graph, "/delivery-chain Show a banner when a user reaches the request limit")
    assert delivery["pipeline"]["status"] in ("pass", "needs_changes", "needs_review", "clarification_required", "blocked")
    assert delivery["reply"].startswith(f"/delivery-chain finished with status {delivery['pipeline']['status']}.")


def test_a_long_requirement_reaches_the_pipeline_whole(offline_models):
    seen: list[dict[str, Any]] = []
    routes = _routes(seen, {"final_decision": "final", "summary": "s"}, {"run_status": "pass", "report": "r"}, [])
    graph = build_graph(models=offline_models, registry=chat_registry(), pipelines=routes)
    requirement = "Users can export reports. " * 150  # ~3,900 characters: beyond the chat cut
    _ask(graph, f"/delivery-chain {requirement}")
    assert seen[-1] == {"requirement": requirement.strip()}
