"""The tasklist agent under ``ainvoke`` (LangGraph Server's path): the same run as ``invoke``, every
model call through the async model API, and a human review pause resumed asynchronously."""

from __future__ import annotations

import asyncio

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reins.graphs.tasklist_agent import build_graph
from reins.runtime.llm.models import ModelSet
from tests.api_recorder import RecordingOfflineModel

READY = {"request": "/tasklist docs://versions/v0.2.0-ready.md"}


def test_ainvoke_produces_the_same_task_list_as_invoke_through_the_async_model_api():
    sync_model, async_model = RecordingOfflineModel(), RecordingOfflineModel()
    expected = build_graph(ModelSet.uniform(sync_model)).invoke(READY)
    result = asyncio.run(build_graph(ModelSet.uniform(async_model)).ainvoke(READY))
    assert result["final_decision"] == expected["final_decision"] and result["final_decision"].startswith("final")
    assert result["artifact"]["markdown"] == expected["artifact"]["markdown"]
    assert [e["step"] for e in result["trace"]] == [e["step"] for e in expected["trace"]]
    assert sync_model.apis and set(sync_model.apis) == {"sync"}
    assert async_model.apis == ["async"] * len(sync_model.apis)


def test_a_review_pause_resumes_through_ainvoke():
    model = RecordingOfflineModel()
    graph = build_graph(ModelSet.uniform(model), checkpointer=InMemorySaver(), human_review=True)
    config = {"configurable": {"thread_id": "async-review"}}

    async def main():
        first = await graph.ainvoke(READY, config)
        final = await graph.ainvoke(Command(resume={"type": "approve"}), config)
        return first, final

    first, final = asyncio.run(main())
    assert first["__interrupt__"][0].value["kind"] == "strategy_review"
    assert final["final_decision"].startswith("final") and final["artifact"]["metadata"]["validated"]
    assert model.apis and set(model.apis) == {"async"}


def test_under_ainvoke_no_step_or_edge_takes_an_executor_thread(executor_hops):
    """Model steps await the async API; every other step and every edge is quick and runs on the
    loop; only the plan's file read goes to a worker thread (it may block: stat, symlinks)."""
    graph = build_graph(ModelSet.uniform(RecordingOfflineModel()), checkpointer=InMemorySaver(), human_review=True)
    config = {"configurable": {"thread_id": "on-the-loop"}}

    async def main():
        await graph.ainvoke(READY, config)
        return await graph.ainvoke(Command(resume={"type": "approve"}), config)

    assert asyncio.run(main())["final_decision"].startswith("final")
    assert [hop.args[0].__name__ for hop in executor_hops] == ["read"]  # asyncio.to_thread(resolver.read, uri)
