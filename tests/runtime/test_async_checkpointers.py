"""The async savers runtime.persistence.checkpoint hands out run every graph under ainvoke (SQLite here; the
PostgreSQL one in tests/integration), a review pause and its resume included."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage
from langgraph.types import Command

from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.delivery_chain import build_graph as build_delivery
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from reins.runtime.persistence.checkpoint import open_async_checkpointer, open_checkpointer
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.config.settings import SettingsError


async def run_every_graph(saver) -> dict:
    """Each graph once under ainvoke with ``saver``; the results and the stored final states."""
    model = OfflineModel()
    tasklist = build_tasklist(models=model, checkpointer=saver, human_review=True)
    delivery = build_delivery(models=model, checkpointer=saver)
    assistant = build_assistant(models=model, checkpointer=saver)
    t, d, a = ({"configurable": {"thread_id": name}} for name in ("async-tasklist", "async-delivery", "async-chat"))
    paused = await tasklist.ainvoke({"request": "/tasklist docs://versions/v0.2.0-ready.md"}, t)
    assert paused["__interrupt__"][0].value["kind"] == "strategy_review"
    finished = await tasklist.ainvoke(Command(resume={"type": "approve"}), t)
    delivered = await delivery.ainvoke({"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}, d)
    answered = await assistant.ainvoke({"messages": [HumanMessage(content="what is (17+25)*3?")]}, a)
    stored = {
        "tasklist": (await tasklist.aget_state(t)).values,
        "delivery": (await delivery.aget_state(d)).values,
        "assistant": (await assistant.aget_state(a)).values,
    }
    return {"tasklist": finished, "delivery": delivered, "assistant": answered, "stored": stored}


def check(outcome: dict) -> None:
    assert outcome["tasklist"]["final_decision"] == "final"
    assert outcome["delivery"]["run_status"] == "pass"
    assert "126" in outcome["assistant"]["reply"]
    assert outcome["stored"]["tasklist"]["final_decision"] == "final"
    assert outcome["stored"]["delivery"]["report"] == outcome["delivery"]["report"]
    assert len(outcome["stored"]["assistant"]["messages"]) == 2


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_every_graph_under_ainvoke_with_the_async_saver(kind, tmp_path):
    async def main():
        async with open_async_checkpointer(kind, path=tmp_path / "async.db") as saver:
            return type(saver).__name__, await run_every_graph(saver)

    name, outcome = asyncio.run(main())
    assert name == {"memory": "InMemorySaver", "sqlite": "AsyncSqliteSaver"}[kind]
    check(outcome)
    if kind == "sqlite":  # the same file serves a sync reader afterwards
        with open_checkpointer("sqlite", path=tmp_path / "async.db") as saver:
            values = build_delivery(checkpointer=saver).get_state({"configurable": {"thread_id": "async-delivery"}}).values
        assert values["run_status"] == "pass"


def test_an_unknown_kind_or_a_missing_url_is_one_line():
    async def open_it(kind):
        async with open_async_checkpointer(kind):
            pass

    with pytest.raises(SettingsError, match="REINS_CHECKPOINT='redis'"):
        asyncio.run(open_it("redis"))
    with pytest.raises(SettingsError, match="REINS_CHECKPOINT_URL"):
        asyncio.run(open_it("postgres"))


def test_the_docs_async_example_runs(tmp_path, monkeypatch):
    import re

    from reins.cli.diagrams import DOCS

    monkeypatch.delenv("REINS_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "getting-started.md").read_text(), re.S)
    (example,) = [block for block in blocks if "open_async_checkpointer" in block]
    namespace: dict = {"build_delivery_chain": build_delivery}
    exec(compile(example, "docs/getting-started.md", "exec"), namespace)  # noqa: S102 — our own documentation
    assert (tmp_path / "runs.db").stat().st_size > 0
