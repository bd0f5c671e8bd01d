"""No provider message reaches the user anywhere — CLI output (text and ``--json``), the trace, the
checkpoint — only the cause Reins names (``HTTP 400``, ``connection refused`` …). The provider's
message below carries a marker, a path and a key, as real ones can."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from reins.cli import main
from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.delivery_chain import build_graph as build_delivery
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from tests.wire.behaviours import asks_for, cooperative, failing, kind_of
from tests.wire.conftest import KEY, wire_models
from tests.wire.provider_stub import HttpError

MARK = "PROVIDER-SAYS-samplers"
LEAKY = HttpError(400, f"Failed to initialize samplers: {MARK} at /srv/llama/grammar.cpp key={KEY}")


def everything(graph, thread: str) -> str:
    """Every value the checkpointer holds for the thread, its history included, as text."""
    config = {"configurable": {"thread_id": thread}}
    return json.dumps([snapshot.values for snapshot in graph.get_state_history(config)], default=str)


def assert_clean(text: str) -> None:
    assert MARK not in text and "/srv/llama" not in text and KEY not in text
    assert "Error code" not in text and "InvalidRequestError" not in text and "BadRequestError" not in text


@pytest.mark.parametrize("failing_step", ["AssistantAnswer", "AssistantIntent"])
def test_the_assistant_names_the_cause_never_the_message(stub, failing_step):
    provider = stub(failing(asks_for(failing_step), LEAKY))
    graph = build_assistant(models=wire_models(provider.base_url), store=InMemoryStore(), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "leak"}}
    out = graph.invoke({"messages": [HumanMessage(content="what is (17+25)*3?")]}, config)
    assert failing_step in [kind_of(body) for body in provider.bodies()]
    assert_clean(json.dumps(out, default=str))
    assert_clean(everything(graph, "leak"))
    assert "HTTP 400" in json.dumps(out["trace"], default=str)


def test_the_delivery_chain_and_tasklist_name_the_cause_never_the_message(stub):
    provider = stub(failing(asks_for("DeliveryPlan"), LEAKY))
    graph = build_delivery(models=wire_models(provider.base_url), checkpointer=InMemorySaver())
    out = graph.invoke({"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"},
                       {"configurable": {"thread_id": "leak"}})
    assert out["run_status"] == "failed"
    assert_clean(json.dumps(out, default=str))
    assert_clean(everything(graph, "leak"))

    provider = stub(failing(asks_for("PlanningDecision"), LEAKY))
    graph = build_tasklist(models=wire_models(provider.base_url), checkpointer=InMemorySaver())
    out = graph.invoke({"request": "/tasklist docs://versions/v0.2.0-ready.md"}, {"configurable": {"thread_id": "t"}})
    assert out["status"] == "failed"
    assert_clean(json.dumps(out, default=str))
    assert_clean(everything(graph, "t"))


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("failing_step", ["AssistantAnswer", "AssistantIntent"])
def test_chat_cli_output_names_the_cause_never_the_message(stub, fast_cli, capsys, as_json, failing_step):
    provider = stub(failing(asks_for(failing_step), LEAKY))
    fast_cli(provider.base_url)
    main(["chat", "--once", "what is (17+25)*3?", *(["--json"] if as_json else [])])
    captured = capsys.readouterr()
    assert_clean(captured.out + captured.err)
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("command", [["deliver", "--scenario", "request-limit-banner"],
                                     ["tasklist", "docs://versions/v0.2.0-ready.md"]])
@pytest.mark.parametrize("as_json", [False, True])
def test_pipeline_cli_output_names_the_cause_never_the_message(stub, fast_cli, capsys, command, as_json):
    provider = stub(lambda body: LEAKY)
    fast_cli(provider.base_url)
    code = main([*command, *(["--json"] if as_json else [])])
    captured = capsys.readouterr()
    assert code != 0
    assert_clean(captured.out + captured.err)
    assert "HTTP 400" in captured.out + captured.err
