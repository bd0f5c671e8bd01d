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
from reins.runtime.standins.offline.assistant import find_subtasks
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


NO_ARGS = ((), (), {})  # a tool that takes no arguments: (parameters, required ones, types)


@pytest.mark.parametrize(
    ("text", "tools", "expected"),
    [
        ("use notes__tally", {"notes__tally": NO_ARGS}, [("notes__tally", {})]),  # named: called, as tools with arguments are
        ("use notes__tally, then 2+3", {"notes__tally": NO_ARGS}, [("notes__tally", {}), ("calculator", {"expression": "2+3"})]),
        ("what's the tally?", {"notes__tally": NO_ARGS}, [("notes__tally", {})]),  # says what its name says
        ("what time is it?", {"get_current_time": NO_ARGS}, [("get_current_time", {}), ("clock", {})]),
        ("what's the weather like?", {"getWeather": NO_ARGS}, [("getWeather", {})]),
        ("crash the server now", {"notes__crash_now": NO_ARGS}, [("notes__crash_now", {})]),
        ("what time is it now?", {"notes__crash_now": NO_ARGS}, [("clock", {})]),  # "now" alone names nothing
        ("show the timeline", {"get_current_time": NO_ARGS}, []),  # whole words only
        ("fetch https://example.com/tally", {"notes__tally": NO_ARGS}, [("http_get", {"url": "https://example.com/tally"})]),
        ("how many words in a b c?", {"notes__word_count": (("text",), ("text",), {"text": "string"})}, []),  # has arguments
        ("use notes__tally", {}, []),  # not offered
    ],
)
def test_a_tool_without_arguments_is_called_when_the_message_asks_for_it(text, tools, expected):
    assert [(t.tool, t.args) for t in find_subtasks(text, None, tools)] == expected


class NoArgs(BaseModel):
    pass


def test_the_stand_in_calls_a_user_tool_and_an_mcp_tool_that_take_no_arguments():
    ran: list[str] = []
    registry = chat_registry()
    registry.register(RegisteredTool(name="current_time", description="The time on the user's own clock.",
                                     args_schema=NoArgs, scopes=frozenset({"chat"}), read_only=True,
                                     func=lambda: ran.append("current_time") or "09:41 (local)"))
    # an MCP tool's arguments come as its server's JSON schema: here, none
    registry.register(RegisteredTool(name="notes__tally", description="How many notes there are.",
                                     args_schema={"type": "object", "properties": {}}, scopes=frozenset({"chat"}),
                                     server="notes", read_only=True, func=lambda: ran.append("tally") or "7 notes"))
    graph = build_graph(models=ModelSet.uniform(OfflineModel()), registry=registry, checkpointer=InMemorySaver())

    clock = _ask(graph, "what time is it?", "time")
    assert [(r["tool"], r["ok"]) for r in clock["records"]] == [("current_time", True), ("clock", True)]
    assert "current_time returned 09:41 (local)." in clock["reply"] and clock["answer"]["verdict"] == "success"

    tally = _ask(graph, "use notes__tally", "tally")
    assert [(r["tool"], r["args"], r["output"]) for r in tally["records"]] == [("notes__tally", {}, "7 notes")]
    assert "7 notes" in tally["reply"]
    assert ran == ["current_time", "tally"]
