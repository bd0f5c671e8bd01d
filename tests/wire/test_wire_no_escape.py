"""No provider error escapes a graph: the tasklist agent and the assistant end with a named cause
(stage and ``connection refused`` / ``HTTP 404: …``) under ``invoke`` and ``ainvoke``."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from tests.wire.behaviours import cooperative
from tests.wire.conftest import KEY, wire_models
from tests.wire.provider_stub import closed_port

REFUSED = ("refused", "connection refused")
NO_VERSION = ("no_version", "HTTP 404: the base URL has no version path such as /v1")


def _base_url(stub, case: str) -> str:
    if case == "refused":
        return f"http://127.0.0.1:{closed_port()}/v1"
    return stub(cooperative).base_url.removesuffix("/v1")  # every route answers 404


def _run(graph, payload, how: str):
    return graph.invoke(payload) if how == "invoke" else asyncio.run(graph.ainvoke(payload))


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
@pytest.mark.parametrize(("case", "cause"), [REFUSED, NO_VERSION])
def test_tasklist_ends_failed_with_the_stage_and_cause(stub, how, case, cause):
    graph = build_tasklist(models=wire_models(_base_url(stub, case)))
    out = _run(graph, {"request": "/tasklist docs://versions/v0.2.0-ready.md"}, how)
    assert out["status"] == "failed" and out["final_decision"] == "failed"
    assert out["message"] == f"The run failed: planning_decision failed: {cause}."
    assert any(f"planning_decision failed: {cause}" in record["summary"] for record in out["trace"])
    assert KEY not in json.dumps(out, default=str)


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
@pytest.mark.parametrize(("case", "cause"), [REFUSED, NO_VERSION])
def test_assistant_ends_the_turn_with_the_stage_and_cause(stub, how, case, cause):
    graph = build_assistant(models=wire_models(_base_url(stub, case)), store=InMemoryStore())
    out = _run(graph, {"messages": [HumanMessage(content="what is (17+25)*3?")]}, how)
    assert out["failure"] == f"classify_intent failed: {cause}"
    assert out["answer"]["verdict"] == "failure" and out["records"] == []
    assert f"The model could not be used: classify_intent failed: {cause}." in out["reply"]
    assert KEY not in json.dumps(out, default=str)
