"""langgraph.json: the three graphs LangGraph Server and Studio load, compiled without a checkpointer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

from runtime.diagrams import LANGGRAPH_JSON, load_graph

CONFIG = json.loads(LANGGRAPH_JSON.read_text())
ROOT = LANGGRAPH_JSON.parent


def test_langgraph_json_exports_exactly_the_three_graphs():
    assert sorted(CONFIG["graphs"]) == ["assistant", "delivery_chain", "tasklist_agent"]
    assert CONFIG["dependencies"] == ["."] and CONFIG["python_version"] == "3.11"


@pytest.mark.parametrize("name", sorted(CONFIG["graphs"]))
def test_each_export_is_a_compiled_graph_the_server_can_checkpoint(name):
    path, attribute = CONFIG["graphs"][name].rsplit(":", 1)
    assert (ROOT / Path(path)).is_file() and attribute == "graph"
    graph = load_graph(name)
    assert isinstance(graph, CompiledStateGraph)
    assert graph.name == name
    # LangGraph Server supplies its own persistence; a graph compiled with one would be refused or ignored.
    assert graph.checkpointer is None and graph.store is None
    # Studio offers per-run configuration through the graph's context schema.
    assert graph.builder.context_schema is not None
