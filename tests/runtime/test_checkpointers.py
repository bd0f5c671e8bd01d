"""Checkpointers: memory and sqlite keep a thread; a paused sqlite thread resumes in a fresh process."""

from __future__ import annotations

import logging
import operator
from typing import Annotated, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pydantic import BaseModel

from reins.runtime.persistence.checkpoint import open_checkpointer, strict_serializer
from reins.runtime.config.settings import SettingsError


class _State(TypedDict, total=False):
    steps: Annotated[list[str], operator.add]
    approved: bool
    messages: list


def _draft(state: _State) -> _State:
    return {"steps": ["draft"], "messages": [HumanMessage(content="plan v1"), AIMessage(content="ok")]}


def _review(state: _State) -> _State:
    decision = interrupt({"question": "approve the draft?"})
    return {"steps": ["review"], "approved": decision == "approve"}


def _build(saver):
    builder = StateGraph(_State)
    builder.add_node("draft", _draft)
    builder.add_node("review", _review)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_thread_pauses_and_resumes(kind, tmp_path):
    config = {"configurable": {"thread_id": f"{kind}-thread"}}
    with open_checkpointer(kind, path=tmp_path / "reins.db") as saver:
        graph = _build(saver)

        paused = graph.invoke({"steps": []}, config)
        assert paused["steps"] == ["draft"]
        assert paused["__interrupt__"][0].value == {"question": "approve the draft?"}
        assert graph.get_state(config).next == ("review",)

        done = graph.invoke(Command(resume="approve"), config)

        assert done["steps"] == ["draft", "review"] and done["approved"] is True
        assert [m.content for m in done["messages"]] == ["plan v1", "ok"]  # messages survive the round trip
        assert graph.get_state(config).next == ()


def test_a_paused_sqlite_thread_continues_with_a_fresh_saver(tmp_path):
    db = tmp_path / "nested" / "checkpoints.db"  # parent folders are created
    config = {"configurable": {"thread_id": "run-42"}}

    with open_checkpointer("sqlite", path=db) as first:
        _build(first).invoke({"steps": []}, config)

    with open_checkpointer("sqlite", path=db) as second:  # a new process would do exactly this
        graph = _build(second)
        assert graph.get_state(config).next == ("review",)
        done = graph.invoke(Command(resume="reject"), config)

    assert done["steps"] == ["draft", "review"] and done["approved"] is False


def test_threads_are_isolated(tmp_path):
    with open_checkpointer("sqlite", path=tmp_path / "x.db") as saver:
        graph = _build(saver)
        graph.invoke({"steps": []}, {"configurable": {"thread_id": "a"}})
        assert graph.get_state({"configurable": {"thread_id": "b"}}).values == {}


class _Smuggled(BaseModel):
    command: str


def test_deserialisation_is_strict(caplog):
    serde = strict_serializer()
    with caplog.at_level(logging.WARNING):
        revived = serde.loads_typed(serde.dumps_typed(_Smuggled(command="rm -rf")))
    assert not isinstance(revived, _Smuggled)  # an unknown class is never constructed
    assert revived == {"command": "rm -rf"}
    message = HumanMessage(content="hi")
    assert serde.loads_typed(serde.dumps_typed(message)) == message  # LangChain messages are allowed


def test_postgres_needs_a_url_and_unknown_kinds_are_refused():
    with pytest.raises(SettingsError, match="REINS_CHECKPOINT_URL"):
        with open_checkpointer("postgres"):
            pass
    with pytest.raises(SettingsError, match="REINS_CHECKPOINT='redis' is not valid"):
        with open_checkpointer("redis"):
            pass


def test_unreachable_postgres_is_one_line_naming_the_variable():
    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.runtime.config.settings import SettingsError
    from tests.integration.services import free_port

    url = f"postgresql://someone:hunter2@127.0.0.1:{free_port()}/db"  # nothing listens there
    with pytest.raises(SettingsError) as raised:
        with open_checkpointer("postgres", url=url):
            pass
    message = str(raised.value)
    assert message == "REINS_CHECKPOINT_URL: cannot connect to that PostgreSQL server"
    assert "hunter2" not in message and "\n" not in message
