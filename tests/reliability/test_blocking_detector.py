"""Under ``ainvoke`` no graph blocks the event loop, with LangGraph Server's blocking detector on
exactly as ``langgraph dev`` turns it on (blockbuster, langgraph_runtime_inmem.queue), plans read
through a symlink inside the docs root included."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.delivery_chain import build_graph as build_delivery
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.config.paths import BUNDLED_DOCS
from reins.runtime.resources import ResourceResolver


@pytest.fixture
def linked_docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "versions").mkdir(parents=True)
    (root / "plans").mkdir()
    shutil.copy(BUNDLED_DOCS / "versions" / "v0.2.0-ready.md", root / "plans" / "ready.md")
    (root / "versions" / "linked.md").symlink_to("../plans/ready.md")  # inside the root: allowed
    return root


@pytest.fixture
def blocking_detector():
    """The detector as ``langgraph dev`` configures it (every allowance it makes, nothing more)."""
    from blockbuster import BlockingError
    from langgraph_runtime_inmem.queue import _enable_blockbuster

    detector = _enable_blockbuster()
    try:
        yield BlockingError
    finally:
        detector.deactivate()


def test_the_detector_is_on(blocking_detector, linked_docs):
    async def blocking():
        return ResourceResolver(docs_root=linked_docs).read("docs://versions/linked.md")  # on the loop

    with pytest.raises(blocking_detector):
        asyncio.run(blocking())


def test_every_graph_runs_under_ainvoke_without_blocking_the_loop(blocking_detector, linked_docs):
    resolver = ResourceResolver(docs_root=linked_docs)
    tasklist = build_tasklist(models=OfflineModel(), resolver=resolver)
    reviewed = build_tasklist(models=OfflineModel(), resolver=resolver, checkpointer=InMemorySaver(), human_review=True)
    delivery = build_delivery(models=OfflineModel())
    assistant = build_assistant(models=OfflineModel(), checkpointer=InMemorySaver())

    async def main():
        plan = {"request": "/tasklist docs://versions/linked.md"}
        first = await tasklist.ainvoke(plan)
        config = {"configurable": {"thread_id": "reviewed"}}
        paused = await reviewed.ainvoke(plan, config)
        from langgraph.types import Command

        resumed = await reviewed.ainvoke(Command(resume={"type": "approve"}), config)
        delivered = await delivery.ainvoke({"requirement_uri": "demo://scenarios/register-login/requirement.md"})
        chat = await assistant.ainvoke({"messages": [HumanMessage(content="what is (17+25)*3?")]},
                                       {"configurable": {"thread_id": "chat"}})
        return first, paused, resumed, delivered, chat

    first, paused, resumed, delivered, chat = asyncio.run(main())
    assert first["final_decision"] == "final" and first["artifact"]["metadata"]["plan_uri"] == "docs://versions/linked.md"
    assert paused["__interrupt__"][0].value["kind"] == "strategy_review"
    assert resumed["final_decision"] == "final"
    assert delivered["run_status"] in ("pass", "needs_review") and delivered["failure"] is None
    assert "126" in chat["reply"]


def test_the_assistant_with_stdio_and_http_mcp_servers_never_blocks_the_loop(blocking_detector, tmp_path,
                                                                              monkeypatch):
    """What ``langgraph dev`` runs: the servers named by REINS_MCP_CONFIG (a file, read at run time)
    and by the run's context, a read-only call, then an approval round trip of a side effect."""
    import json

    from langgraph.types import Command

    from reins.runtime.standins.scripted import ScriptedModel
    from tests.assistant.helpers import answer, tool_call
    from tests.assistant.mcp.servers import config, executions, http_server, stdio_server

    record = tmp_path / "executions.jsonl"
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(local=stdio_server(record))))
    monkeypatch.setenv("REINS_MCP_CONFIG", str(path))
    monkeypatch.setenv("REINS_HOME", str(tmp_path / "home"))
    plan = {"intent": "COMPLEX", "reason": "two", "plan": {"goal": "count, store", "steps": [
        {"id": 1, "tool": "remote__word_count", "purpose": "count"}, {"id": 2, "tool": "local__add_note", "purpose": "store"}]}}
    model = ScriptedModel({"assistant.intent": [plan], "assistant.answer": [answer("Counted and stored.")],
                           "assistant.step": [tool_call("remote__word_count", text="a b c"),
                                              tool_call("local__add_note", text="from the server")]})
    assistant = build_assistant(models=model, checkpointer=InMemorySaver())
    with http_server(record) as url:
        remote = config(remote={"url": url, "trust_annotations": True})
        thread = {"configurable": {"thread_id": "mcp-chat"}}

        async def main():
            paused = await assistant.ainvoke({"messages": [HumanMessage(content="count and store")]}, thread,
                                             context={"mcp_config": remote})
            before = list(executions(record))
            done = await assistant.ainvoke(Command(resume={"type": "approve"}), thread, context={"mcp_config": remote})
            return paused, before, done

        paused, before, done = asyncio.run(main())
    assert paused["__interrupt__"][0].value["tool"] == "local__add_note" and before == []
    assert [r["output"] for r in done["records"]] == ["3 words", "stored: from the server"]
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "from the server"})]
