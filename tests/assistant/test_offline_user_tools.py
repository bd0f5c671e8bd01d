"""The offline stand-in and the user's own tools: every required parameter filled from the message,
typed from the tool's schema; where it cannot, the answer names the form that works."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel

from reins.graphs.assistant import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.offline.tool_args import fill_arguments, usage
from reins.runtime.tools.registry import RegisteredTool
from tests.assistant.helpers import chat_registry

TYPES = {"note": "string", "tag": "string", "priority": "integer", "urgent": "boolean", "weight": "number"}
PARAMS = ("note", "tag", "priority", "urgent", "weight")


@pytest.mark.parametrize(
    ("rest", "required", "expected"),
    [
        (' on "buy milk"', ("note",), {"note": "buy milk"}),
        (' on "buy milk" and "shopping"', ("note", "tag"), {"note": "buy milk", "tag": "shopping"}),
        (' with note="buy milk" tag=shopping priority=2', ("note", "tag", "priority"),
         {"note": "buy milk", "tag": "shopping", "priority": 2}),
        (' with tag: home, note: "fix the tap"', ("note", "tag"), {"note": "fix the tap", "tag": "home"}),
        (' on "buy milk" priority 3', ("note", "priority"), {"note": "buy milk", "priority": 3}),
        (' on "a" with urgent=yes weight=2.5', ("note",), {"note": "a", "urgent": True, "weight": 2.5}),
        (' on "buy milk"', ("note", "tag"), None),  # the tag is missing: no call
        (' with priority=high note="x"', ("note", "priority"), None),  # not an integer
        (" with nothing", ("note",), None),
        (' on "2+2"', (), {"note": "2+2"}),  # no required list: the first parameter
    ],
)
def test_fill_arguments(rest, required, expected):
    assert fill_arguments(rest, PARAMS, required, TYPES) == expected


def test_usage_names_every_required_parameter_with_a_typed_example():
    assert usage("tag_note", PARAMS, ("note", "tag", "priority"), TYPES) == (
        'use tag_note with note="…" tag="…" priority=3')


class TagArgs(BaseModel):
    note: str
    tag: str
    priority: int = 1


def _assistant(calls: list[dict]):
    registry = chat_registry()
    registry.register(RegisteredTool(name="tag_note", description="Tag a note (changes the notes).",
                                     args_schema=TagArgs, scopes=frozenset({"chat"}),
                                     func=lambda **args: calls.append(args) or f"tagged {args['note']}"))
    return build_graph(models=ModelSet.uniform(OfflineModel()), registry=registry, checkpointer=InMemorySaver())


def _ask(graph, text: str, thread: str):
    return graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": thread}})


def test_a_two_parameter_write_tool_reaches_the_approval_with_typed_arguments():
    calls: list[dict] = []
    graph = _assistant(calls)
    paused = _ask(graph, 'use tag_note with note="buy milk" tag=shopping priority=2', "w")
    (pause,) = paused["__interrupt__"]
    assert pause.value["kind"] == "tool_approval" and pause.value["tool"] == "tag_note"
    assert pause.value["args"] == {"note": "buy milk", "tag": "shopping", "priority": 2}
    assert calls == []  # not before the approval
    done = graph.invoke(Command(resume={"type": "approve"}), {"configurable": {"thread_id": "w"}})
    assert calls == [{"note": "buy milk", "tag": "shopping", "priority": 2}]
    assert done["answer"]["verdict"] == "success" and "tagged buy milk" in done["reply"]


def test_when_the_message_does_not_fill_the_parameters_the_answer_names_the_form_that_works():
    calls: list[dict] = []
    graph = _assistant(calls)
    result = _ask(graph, 'use tag_note on "buy milk"', "short")
    assert "__interrupt__" not in result and calls == [] and result["records"] == []
    assert result["answer"]["verdict"] == "partial"
    assert 'use tag_note with note="…" tag="…"' in result["reply"]
