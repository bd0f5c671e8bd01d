"""``build_graph(models=...)`` takes one chat model (for every role) or a ModelSet, for all three
graphs, and refuses anything else when the graph is built."""

from __future__ import annotations

import importlib

import pytest

from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.scripted import ScriptedModel

GRAPHS = ("reins.graphs.delivery_chain", "reins.graphs.tasklist_agent", "reins.graphs.assistant")


@pytest.mark.parametrize("module", GRAPHS)
@pytest.mark.parametrize("wrong", ["gpt-4o", {"planner": OfflineModel()}, [OfflineModel()], OfflineModel])
def test_anything_but_a_chat_model_or_model_set_is_refused_at_build_time(module, wrong):
    build_graph = importlib.import_module(module).build_graph
    with pytest.raises(TypeError, match="models must be a LangChain chat model .* or a reins.ModelSet"):
        build_graph(models=wrong)


def test_one_chat_model_serves_every_role_of_the_delivery_chain():
    from reins.graphs.delivery_chain import build_graph

    result = build_graph(models=OfflineModel()).invoke({"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"})
    assert result["run_status"] == "pass"
    assert sum(result["metrics"]["calls"].values()) == 10


def test_one_chat_model_serves_the_tasklist_agent_and_the_assistant():
    from reins.graphs.assistant import build_graph as build_assistant
    from reins.graphs.tasklist_agent import build_graph as build_tasklist

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


@pytest.mark.parametrize(("context_class", "key", "expected"), [
    ("reins.nodes.delivery.context:DeliveryContext", "modle", "unknown context key 'modle' for DeliveryContext (did you mean 'model'?); valid keys: model,"),
    ("reins.nodes.tasklist.context:TasklistContext", "human_reveiw", "(did you mean 'human_review'?)"),
    ("reins.runtime.config.context:ReinsContext", "zzz", "unknown context key 'zzz' for ReinsContext; valid keys: model, contract_mode"),
])
def test_a_misspelt_context_key_names_the_valid_keys(context_class, key, expected):
    module, _, name = context_class.partition(":")
    with pytest.raises(TypeError) as refused:
        getattr(importlib.import_module(module), name)(**{key: True})
    assert expected in str(refused.value)


def test_a_graph_run_with_a_misspelt_context_key_is_refused_before_any_model_call():
    from reins import OfflineModel, ScriptedModel, build_delivery_chain

    scripted = ScriptedModel({})
    graph = build_delivery_chain(models=scripted)
    with pytest.raises(TypeError, match="did you mean 'model'"):
        graph.invoke({"requirement": "Show a banner when a user hits the request limit."}, context={"modle": "x"})
    assert scripted.calls == []
    assert build_delivery_chain(models=OfflineModel()).invoke(
        {"requirement": "Show a banner when a user hits the request limit."}, context={"model": None})["run_status"] == "pass"
