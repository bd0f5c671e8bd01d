"""``build_graph(models=...)`` takes one chat model (for every role) or a ModelSet, for all three
graphs, and refuses anything else when the graph is built."""

from __future__ import annotations

import importlib

import pytest

from runtime.standins.offline import OfflineModel
from runtime.standins.scripted import ScriptedModel

GRAPHS = ("graphs.delivery_chain", "graphs.tasklist_agent", "graphs.assistant")


@pytest.mark.parametrize("module", GRAPHS)
@pytest.mark.parametrize("wrong", ["gpt-4o", {"planner": OfflineModel()}, [OfflineModel()], OfflineModel])
def test_anything_but_a_chat_model_or_model_set_is_refused_at_build_time(module, wrong):
    build_graph = importlib.import_module(module).build_graph
    with pytest.raises(TypeError, match="models must be a LangChain chat model .* or a runtime.llm.models.ModelSet"):
        build_graph(models=wrong)


def test_one_chat_model_serves_every_role_of_the_delivery_chain():
    from graphs.delivery_chain import build_graph

    result = build_graph(models=OfflineModel()).invoke({"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"})
    assert result["run_status"] == "pass"
    assert sum(result["metrics"]["calls"].values()) == 10


def test_one_chat_model_serves_the_tasklist_agent_and_the_assistant():
    from graphs.assistant import build_graph as build_assistant
    from graphs.tasklist_agent import build_graph as build_tasklist

    tasklist = build_tasklist(models=OfflineModel()).invoke({"request": "/tasklist docs://versions/v0.2.0-ready.md"})
    assert tasklist["final_decision"] == "final"

    scripted = ScriptedModel({
        "assistant.intent": [{"intent": "QA", "reason": "a greeting"}],
        "assistant.answer": [{"summary": "Hello.", "evidence": [], "verdict": "success"}],
        "assistant.reflection": [{"notes": []}],
    })
    reply = build_assistant(models=scripted, store=None).invoke({"messages": [("user", "hello")]})
    assert reply["reply"]
    assert scripted.contracts_called()[:2] == ["assistant.intent", "assistant.answer"]
