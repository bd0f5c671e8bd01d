"""The assistant under ``ainvoke``: the same turn as ``invoke``, model calls through the async API, and
the reflection note written to the store asynchronously."""

from __future__ import annotations

import asyncio

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graphs.assistant import build_graph
from runtime.models import ModelSet
from tests.api_recorder import RecordingOfflineModel
from tests.assistant.helpers import chat_registry

COMPLEX = {"messages": [HumanMessage(content="compute 2+3, then 4*5")]}


def _graph(model, store):
    return build_graph(ModelSet.uniform(model), InMemorySaver(), registry=chat_registry(), store=store)


def test_a_complex_turn_under_ainvoke_matches_invoke_and_stores_its_reflection():
    sync_model, async_model = RecordingOfflineModel(), RecordingOfflineModel()
    sync_store, async_store = InMemoryStore(), InMemoryStore()
    config = {"configurable": {"thread_id": "t"}}
    expected = _graph(sync_model, sync_store).invoke(COMPLEX, config)
    result = asyncio.run(_graph(async_model, async_store).ainvoke(COMPLEX, config))
    assert result["intent"] == expected["intent"] == "COMPLEX"
    assert result["reply"] == expected["reply"]
    assert "5" in result["reply"] and "20" in result["reply"]
    assert [r["tool"] for r in result["records"]] == [r["tool"] for r in expected["records"]]
    assert len(async_store.search(("assistant-memory",))) == len(sync_store.search(("assistant-memory",))) == 1
    assert set(sync_model.apis) == {"sync"}
    assert async_model.apis == ["async"] * len(sync_model.apis)
