"""The reply streams as it is written: only its text (never a contract's JSON or a tool call) on
LangGraph's ``messages`` stream, in order, before the run ends; the checked reply comes last."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langgraph.store.memory import InMemoryStore

from reins.graphs.assistant import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.llm.reply_stream import REPLY_KEY, field_text
from reins.runtime.standins.scripted import ScriptedModel
from tests.assistant.helpers import answer, chat_registry, qa


def _events(graph, text: str, how: str) -> list[tuple[str, object]]:
    """Every event of a turn, in arrival order: ("reply", chunk text), ("message", final text), ("values", reply)."""
    payload = {"messages": [HumanMessage(content=text)]}
    events: list[tuple[str, object]] = []

    def record(mode: str, chunk) -> None:
        if mode == "messages":
            message, metadata = chunk
            if isinstance(message, AIMessageChunk):
                assert metadata.get(REPLY_KEY), f"a non-reply chunk was streamed: {message!r}"
                events.append(("reply", message.content))
            else:
                events.append(("message", message.content))
        else:
            events.append(("values", chunk.get("reply")))

    if how == "stream":
        for mode, chunk in graph.stream(payload, stream_mode=["messages", "values"]):
            record(mode, chunk)
    else:
        async def run() -> None:
            async for mode, chunk in graph.astream(payload, stream_mode=["messages", "values"]):
                record(mode, chunk)

        asyncio.run(run())
    return events


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_offline_reply_streams_in_three_or_more_chunks_before_the_run_ends(how):
    events = _events(build_graph(store=InMemoryStore()), "what is (17+25)*3?", how)
    kinds = [kind for kind, _ in events]
    chunks = [text for kind, text in events if kind == "reply"]
    assert len(chunks) >= 3
    assert "".join(chunks) == "(17+25)*3 = 126."  # in order, the text only
    last_chunk = max(i for i, kind in enumerate(kinds) if kind == "reply")
    assert kinds.index("message") > last_chunk and kinds[-1] == "values"  # before the run ends
    assert events[-1] == ("values", "(17+25)*3 = 126.")


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_a_reply_the_check_corrects_is_followed_by_the_checked_text(how):
    model = ScriptedModel({
        "assistant.intent": [qa()],
        "assistant.answer": [answer("I called the calculator and got 42 for you today.")],
    })
    graph = build_graph(models=ModelSet.uniform(model), registry=chat_registry(), store=InMemoryStore())
    events = _events(graph, "what is six times seven?", how)
    streamed = "".join(text for kind, text in events if kind == "reply")
    finals = [text for kind, text in events if kind == "message"]
    assert streamed == "I called the calculator and got 42 for you today."
    assert len(finals) == 1 and "42" not in finals[0] and "no tool produced" in finals[0]
    assert events[-1] == ("values", finals[0])  # the checked text is the reply


def test_no_reply_streams_from_a_plain_invoke():
    model = ScriptedModel({"assistant.intent": [qa()], "assistant.answer": [answer("Paris.")]})
    out = build_graph(models=ModelSet.uniform(model), store=InMemoryStore()).invoke(
        {"messages": [HumanMessage(content="capital of France?")]})
    assert out["reply"].startswith("Paris.") and isinstance(out["messages"][-1], AIMessage)


@pytest.mark.parametrize(
    ("raw", "text"),
    [("", ""), ('{"verdict": "success", "summ', ""), ('{"summary": "Hel', "Hel"), ('{"summary": "a\\"b', 'a"b'),
     ('{"summary": "done", "evidence": ["x', "done"), ('{"summary": 3}', "")],
)
def test_the_reply_text_is_read_from_partial_json(raw, text):
    assert field_text(raw, "summary") == text


def test_a_secret_in_the_streamed_reply_is_shown_only_redacted():
    model = ScriptedModel({"assistant.intent": [qa()],
                           "assistant.answer": [answer("Your key is sk-stream0123456789abcdef and nothing else.")]})
    graph = build_graph(models=ModelSet.uniform(model), store=InMemoryStore())
    streamed = "".join(text for kind, text in _events(graph, "my key?", "stream") if kind == "reply")
    assert "sk-" not in streamed and streamed == "Your key is [redacted] and nothing else."
