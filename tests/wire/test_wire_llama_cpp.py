"""The three graphs against a stub that behaves like llama.cpp's ``llama-server`` (``--jinja``) with a
small local model: tool calls written as text, and a grammar builder that refuses a schema with a
repetition of 2000 or more (``tests/wire/llama_server.py``). With the settings ``reins doctor
--check`` prints for such a server (the README's recipe), every graph gets its answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.delivery_chain import build_graph as build_delivery
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from tests.wire.behaviours import cooperative, kind_of
from tests.wire.conftest import wire_models
from tests.wire.llama_server import GRAMMAR_400, grammar_limited, qwen
from tests.wire.provider_stub import HttpError

SCENARIO = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
README = Path(__file__).resolve().parents[2] / "docs" / "models.md"  # the local-server recipe


def readme_recipe() -> dict[str, str]:
    """The README's local-server recipe (what `reins doctor --check` prints for such a server), minus
    the endpoint and model, which the stub stands for."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- local-recipe -->\n```bash\n(.*?)```\n<!-- /local-recipe -->", text, re.S)
    assert block, "docs/models.md has no <!-- local-recipe --> block"
    pairs = dict(re.findall(r"\b([A-Z_]+)=(\S+)", block.group(1)))
    return {k: v for k, v in pairs.items() if k not in ("OPENAI_BASE_URL", "REINS_MODEL")}


RECIPE = readme_recipe()


def test_the_recipe_sets_what_doctor_advises_for_text_calls():
    assert RECIPE["REINS_TOOL_CHOICE"] == "auto" and RECIPE["REINS_TEXT_TOOL_CALLS"] == "recover"
    assert {"REINS_MAX_TOKENS_MANAGER", "REINS_MAX_TOKENS_TASKLIST", "REINS_TIMEOUT_TASKLIST"} <= set(RECIPE)



def test_the_stub_refuses_what_llama_cpp_refused():
    limited = grammar_limited(cooperative)
    schema = {"type": "object", "properties": {"summary": {"type": "string", "maxLength": 2000}}}
    body = {"messages": [], "response_format": {"type": "json_schema", "json_schema": {"name": "Ping", "schema": schema}}}
    assert limited(body) == GRAMMAR_400
    schema["properties"]["summary"]["maxLength"] = 1999
    assert not isinstance(limited(body), HttpError)


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_the_delivery_chain_passes_on_a_llama_cpp_like_server(stub, method):
    provider = stub(grammar_limited(qwen()))
    out = build_delivery(models=wire_models(provider.base_url, REINS_STRUCTURED_METHOD=method, **RECIPE)).invoke(
        dict(SCENARIO))
    assert out["run_status"] == "pass", out.get("failure")
    kinds = [kind_of(body) for body in provider.bodies()]
    assert {"DeliveryPlan", "DeliveryTasks", "GeneralReview", "RiskReview", "BoundaryReview"} <= set(kinds)
    assert out["metrics"]["manager_refusals"] == 0


def test_the_chat_answer_passes_on_a_llama_cpp_like_server(stub):
    provider = stub(grammar_limited(cooperative))
    graph = build_assistant(models=wire_models(provider.base_url, **RECIPE), store=InMemoryStore())
    out = graph.invoke({"messages": [HumanMessage(content="what is (17+25)*3?")]})
    assert out["answer"]["verdict"] == "success" and "126" in out["reply"]
    assert kind_of(provider.bodies()[-1]) == "AssistantAnswer"


def test_the_tasklist_agent_passes_on_a_llama_cpp_like_server(stub):
    provider = stub(grammar_limited(cooperative))
    out = build_tasklist(models=wire_models(provider.base_url, **RECIPE)).invoke(
        {"request": "/tasklist docs://versions/v0.2.0-ready.md"})
    assert out["status"] == "final"
