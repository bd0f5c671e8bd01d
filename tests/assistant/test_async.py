"""The assistant under ``ainvoke``: the same turn as ``invoke``, model calls through the async API, and
the reflection note written to the store asynchronously."""

from __future__ import annotations

import asyncio

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from reins.graphs.assistant import build_graph
from reins.runtime.llm.models import ModelSet
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


class AsyncOnlyStore(InMemoryStore):
    """A store that refuses synchronous searches: LangGraph Server's store refuses them on its loop."""

    def search(self, *args, **kwargs):
        raise AssertionError("a synchronous store search under ainvoke")


def test_recollections_are_searched_through_the_async_store_api_under_ainvoke():
    from reins.nodes.assistant.memory import MEMORY_ROOT
    from tests.assistant.helpers import summaries

    store = AsyncOnlyStore()
    note = {"text": "Lesson: Fetch the exchange rate before converting.", "keywords": ["exchange", "rate"],
            "kind": "reflection", "created_at": "2026-01-01T00:00:00+00:00"}
    store.put((MEMORY_ROOT, "local", "shared"), "n1", note)  # the user's notes: recalled by default
    question = {"messages": [HumanMessage(content="which exchange rate did we use?")]}
    result = asyncio.run(_graph(RecordingOfflineModel(), store).ainvoke(question, {"configurable": {"thread_id": "t"}}))
    assert summaries(result, "memory")[0].endswith("; 1 recollection(s) injected")


def test_a_chat_turn_under_ainvoke_takes_no_executor_thread(executor_hops):
    """Only tool execution and slash commands may block; a question answered without tools never
    leaves the event loop."""
    graph = _graph(RecordingOfflineModel(), InMemoryStore())
    config = {"configurable": {"thread_id": "on-the-loop"}}
    for text in ("what is reins?", ""):
        result = asyncio.run(graph.ainvoke({"messages": [HumanMessage(content=text)]}, config))
        assert result["reply"]
    assert executor_hops == []
