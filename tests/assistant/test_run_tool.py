"""A proposed call's path to an observation: malformed calls become ``{path, code}`` pairs (never
run), and every way a run can go wrong (a tool's refusal, a bug, a long output) is an observation
through ``ToolNode`` — redacted and capped, never a crash."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel, ConfigDict

from reins.nodes.assistant.executor import malformed_issues
from reins.runtime.tools.chat_tools import ToolFailure
from reins.runtime.tools.registry import RegisteredTool
from reins.runtime.tools.runner import OBSERVATION_CHARS, RunTool, arg_issues
from tests.assistant.helpers import answer, chat_registry, simple, tool_call


class _Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _raise(error: BaseException):
    def tool() -> str:
        raise error

    return tool


@pytest.fixture(scope="module")
def tools():
    registry = chat_registry()
    registry.register(RegisteredTool("crash", "raises", _Empty, frozenset({"chat"}), func=_raise(KeyError("Bearer abc.def.ghi"))))
    registry.register(RegisteredTool("boom", "raises", _Empty, frozenset({"chat"}), func=_raise(OSError("/var/lib/secret.db locked"))))
    registry.register(RegisteredTool("shout", "long", _Empty, frozenset({"chat"}), func=lambda: "A" * 10_000))
    registry.register(RegisteredTool("nofunc", "no callable", _Empty, frozenset({"chat"})))
    refusal = ToolFailure("refused https://u:pw-secret@host.example with key sk-refusal0123456789")
    registry.register(RegisteredTool("refuse", "refuses", _Empty, frozenset({"chat"}), func=_raise(refusal)))
    return registry.for_scope("chat")


@pytest.mark.parametrize(
    ("message", "issues"),
    [
        (tool_call("calculator", expression="2*3"), []),
        (tool_call("calculator"), [{"path": "calls.0.args.expression", "code": "missing"}]),
        (tool_call("calculator", expression="1", x=2), [{"path": "calls.0.args.x", "code": "extra_forbidden"}]),
        (tool_call("plan-subagent", note="x"), [{"path": "calls.0.tool", "code": "unknown_tool"}]),
        (tool_call("nofunc"), [{"path": "calls.0.tool", "code": "unknown_tool"}]),
        (tool_call(""), [{"path": "calls.0.tool", "code": "string_too_short"}]),
        (tool_call("ask_user", question="Which?", options=["only one"]),
         [{"path": "calls.0.args.options", "code": "too_short"}]),
        (AIMessage(content="", invalid_tool_calls=[{"name": "calculator", "args": "{oops", "id": "c1", "error": "bad json",
                                                    "type": "invalid_tool_call"}]),
         [{"path": "invalid_tool_calls.0", "code": "unparsable_arguments"}]),
    ],
)
def test_malformed_calls_are_named_by_path_and_code(tools, message, issues):
    assert malformed_issues(message, tools) == issues


@pytest.mark.parametrize(
    ("tool", "args", "ok", "expected", "forbidden"),
    [
        ("calculator", {"expression": "2*3"}, True, "6", None),
        ("calculator", {"expression": "__import__('os')"}, False, "calculator refused: function calls", None),
        ("crash", {}, False, "crash failed: KeyError", "abc.def.ghi"),
        ("boom", {}, False, "boom failed: OSError", "/var/lib"),
        ("refuse", {}, False, "refused https://[redacted]@host", "sk-refusal"),
        ("refuse", {}, False, "refused", "pw-secret"),
        ("shout", {}, True, "AAAA", None),
        ("read_doc", {"uri": "docs://../../etc/passwd"}, False, "read_doc: path escapes", None),
        ("http_get", {"url": "http://169.254.169.254/latest"}, False, "http_get refused", None),
    ],
)
def test_a_run_is_an_observation(tools, tool, args, ok, expected, forbidden):
    result = RunTool(tools.get(tool), args).run()
    assert result.ok is ok
    assert result.output.startswith(expected)
    assert len(result.output) <= OBSERVATION_CHARS
    assert result.duration_ms >= 0
    if forbidden:
        assert forbidden not in result.output
    json.dumps(result.output)  # plain text for the checkpoint


def test_the_sync_path_runs_inside_a_running_event_loop_too(tools):
    import asyncio

    async def in_a_notebook_cell():
        return RunTool(tools.get("calculator"), {"expression": "6*7"}).run()  # graph.invoke from a cell

    assert asyncio.run(in_a_notebook_cell()).output == "42"


# An MCP tool's arguments as its server declares them: a JSON schema (``inputSchema``), checked with jsonschema.
EVENT_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "day": {"type": "string"}, "hour": {"type": "integer", "minimum": 0},
                   "guests": {"type": "array", "items": {"type": "string"}}},
    "required": ["title", "day", "hour"],
}


def _missing(*names: str) -> list[dict[str, str]]:
    return [{"path": f"args.{name}", "code": "missing"} for name in names]


@pytest.mark.parametrize(
    ("args", "issues"),
    [
        ({"title": "t", "day": "mon", "hour": 9}, []),
        ({"title": "t", "day": "mon"}, _missing("hour")),
        ({}, _missing("title", "day", "hour")),  # each missing field once (jsonschema reports each with the whole list)
        ({"title": 1, "guests": [2]}, [*_missing("day", "hour"), {"path": "args.guests.0", "code": "type"},
                                       {"path": "args.title", "code": "type"}]),
        ({"title": "t", "day": "mon", "hour": -1, "guests": "all"},
         [{"path": "args.guests", "code": "type"}, {"path": "args.hour", "code": "minimum"}]),
        ([], [{"path": "args", "code": "not_an_object"}]),
    ],
)
def test_an_mcp_calls_argument_problems_are_each_named_once(args, issues):
    tool = RegisteredTool("cal__add_event", "adds an event", EVENT_SCHEMA, frozenset({"chat"}), server="cal")
    assert arg_issues(tool, args) == issues


def test_the_model_is_told_each_argument_problem_of_an_mcp_call_once(runner, registry):
    registry.register(RegisteredTool("cal__add_event", "adds an event", EVENT_SCHEMA, frozenset({"chat"}), server="cal",
                                     func=lambda **_: "added"))
    run = runner({"assistant.intent": [simple()], "assistant.step": [tool_call("cal__add_event", guests=["ann"])],
                  "assistant.answer": [answer("The event is not added.", "failure")]})
    (record,) = run.ask("add an event")["records"]
    listed = json.loads(record["output"].split(": ", 1)[1].split("; available tools")[0])
    assert listed == [{"path": f"calls.0.args.{name}", "code": "missing"} for name in ("title", "day", "hour")]
    assert record["ok"] is False
