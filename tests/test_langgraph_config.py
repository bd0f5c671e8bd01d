"""langgraph.json: the three graphs LangGraph Server and Studio load, compiled without a checkpointer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

from reins.cli.diagrams import LANGGRAPH_JSON, graph_paths, load_graph

CONFIG = json.loads(LANGGRAPH_JSON.read_text())
ROOT = LANGGRAPH_JSON.parent


def test_langgraph_json_exports_exactly_the_three_graphs():
    assert sorted(CONFIG["graphs"]) == ["assistant", "delivery_chain", "tasklist_agent"]
    assert CONFIG["dependencies"] == ["."] and CONFIG["python_version"] == "3.11"
    assert CONFIG["env"] == ".env"  # langgraph dev reads the same .env as the CLI (a missing one is fine)


@pytest.mark.parametrize("name", sorted(CONFIG["graphs"]))
def test_each_graph_has_a_description_studio_shows(name):
    entry = CONFIG["graphs"][name]
    assert set(entry) == {"path", "description"} and 40 <= len(entry["description"]) <= 400


@pytest.mark.parametrize("name", sorted(CONFIG["graphs"]))
def test_each_export_is_a_compiled_graph_the_server_can_checkpoint(name):
    path, attribute = graph_paths()[name].rsplit(":", 1)
    assert (ROOT / Path(path)).is_file() and attribute == "graph"
    graph = load_graph(name)
    assert isinstance(graph, CompiledStateGraph)
    assert graph.name == name
    # LangGraph Server supplies its own persistence; a graph compiled with one would be refused or ignored.
    assert graph.checkpointer is None and graph.store is None
    # Studio offers per-run configuration through the graph's context schema.
    assert graph.builder.context_schema is not None


# What Studio builds its input form, its output view and its per-run configuration panel from
# (``client.assistants.get_schemas``): each must exist on the Python the server runs (3.11).
EXPECTED_SCHEMAS = {
    "tasklist_agent": {
        "input": {"request", "plan_uri"},
        "output": {"status", "final_decision", "artifact", "summary"},
        "context": {"model", "contract_mode", "human_review"},
    },
    "delivery_chain": {
        "input": {"requirement", "requirement_uri"},
        "output": {"run_status", "report", "review_bundle"},
        "context": {"model", "contract_mode", "polish", "review_timeout_s"},
    },
    "assistant": {
        "input": {"messages"},
        "output": {"messages", "reply", "pipeline"},
        "context": {"model", "contract_mode", "user_id", "memory_scope", "instructions", "examples"},
    },
}


@pytest.mark.parametrize("name", sorted(CONFIG["graphs"]))
@pytest.mark.parametrize("kind", ["input", "output", "context"])
def test_each_graph_publishes_input_output_and_context_json_schemas(name, kind):
    schema = getattr(load_graph(name), f"get_{kind}_jsonschema")()
    assert schema and schema.get("type") == "object"
    assert EXPECTED_SCHEMAS[name][kind] <= set(schema["properties"])
    json.dumps(schema)  # plain JSON, as the server sends it


def _choices(prop: dict) -> list[str]:
    """The enum of a Literal field, also when it is optional (``anyOf`` with null)."""
    for option in [prop, *prop.get("anyOf", [])]:
        if "enum" in option:
            return option["enum"]
    return []


@pytest.mark.parametrize(
    ("name", "field", "choices"),
    [
        ("tasklist_agent", "contract_mode", ["direct", "two_step"]),
        ("delivery_chain", "contract_mode", ["direct", "two_step"]),
        ("assistant", "contract_mode", ["direct", "two_step"]),
        ("assistant", "memory_scope", ["thread", "user"]),
    ],
)
def test_context_fields_with_fixed_choices_are_dropdowns(name, field, choices):
    prop = load_graph(name).get_context_jsonschema()["properties"][field]
    assert _choices(prop) == choices
    assert prop.get("description")


def test_the_assistants_persona_fields_are_in_studios_context_form():
    schema = load_graph("assistant").get_context_jsonschema()
    props = schema["properties"]
    assert "instructions" in props and props["instructions"].get("description")
    examples = [option for option in props["examples"].get("anyOf", [props["examples"]]) if option.get("type") == "array"]
    (listed,) = examples
    item = listed["items"]
    item = schema.get("$defs", {}).get(item["$ref"].rsplit("/", 1)[-1], item) if "$ref" in item else item
    assert set(item["properties"]) == {"request", "answer"}  # a form of two text fields per example
    assert "REINS_ASSISTANT_PROMPT_FILE" in props["examples"]["description"]


def test_the_contract_mode_choices_are_the_runtimes():
    from typing import get_args

    from reins.runtime.config.context import ContractMode
    from reins.runtime.contracts import CONTRACT_MODES
    from reins.runtime.config.settings import CONTRACT_MODES as SETTINGS_MODES

    assert get_args(ContractMode) == CONTRACT_MODES == SETTINGS_MODES


class _ModelNodes:
    """A callback recording, per model call, the top-level graph node it was made in."""

    def __init__(self):
        from langchain_core.callbacks import BaseCallbackHandler

        nodes = self.nodes = set()

        class Handler(BaseCallbackHandler):
            def on_chat_model_start(self, serialized, messages, *, metadata=None, **kwargs):
                metadata = metadata or {}
                namespace = str(metadata.get("langgraph_checkpoint_ns", ""))
                nodes.add(namespace.split("|")[0].split(":")[0] if "|" in namespace else metadata["langgraph_node"])

        self.handler = Handler()


def _model_nodes(name: str) -> set[str]:
    """Every node of the graph that called a model over runs that reach each model-calling step."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from reins.graphs.assistant import build_graph as assistant
    from reins.graphs.delivery_chain import build_graph as delivery
    from reins.graphs.tasklist_agent import build_graph as tasklist

    seen = _ModelNodes()
    config = {"callbacks": [seen.handler]}
    if name == "tasklist_agent":
        for plan in ("v0.2.0-ready.md", "v0.2.2-needs-revision.md", "draft-ideas.md"):
            tasklist().invoke({"request": f"/tasklist docs://versions/{plan}"}, config)
    elif name == "delivery_chain":
        for scenario in ("request-limit-banner", "resumable-upload"):
            delivery().invoke({"requirement_uri": f"demo://scenarios/{scenario}/requirement.md"}, config,
                              context={"polish": True})
    else:
        graph = assistant(checkpointer=InMemorySaver())
        for index, message in enumerate(("compute 2+2 and tell me the time", "why is the sky blue?",
                                         "/tasklist docs://versions/v0.2.0-ready.md",
                                         "/delivery-chain Show a banner when a user hits the request limit.")):
            graph.invoke({"messages": [HumanMessage(message)]},
                         {**config, "configurable": {"thread_id": f"t{index}"}})
    return seen.nodes


@pytest.mark.parametrize("name", sorted(CONFIG["graphs"]))
def test_the_model_field_is_a_model_picker_for_the_nodes_that_call_a_model(name):
    prop = load_graph(name).get_context_jsonschema()["properties"]["model"]
    assert prop["langgraph_type"] == "llm" and prop["description"]
    assert set(prop["langgraph_nodes"]) == _model_nodes(name)
    assert set(prop["langgraph_nodes"]) <= set(load_graph(name).get_graph().nodes)
