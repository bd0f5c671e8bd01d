"""nodes/assistant/executor.run_tool: every way a call can go wrong is an observation, not a crash."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from nodes.assistant.executor import run_tool
from runtime.chat_tools import ToolFailure
from runtime.registry import RegisteredTool
from tests.assistant.helpers import chat_registry


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
    ("call", "ok", "expected", "forbidden"),
    [
        ({"tool": "calculator", "args": {"expression": "2*3"}}, True, "6", None),
        ({"tool": "calculator", "args": {"expression": "__import__('os')"}}, False, "calculator refused: function calls", None),
        ({"tool": "calculator", "args": {}}, False, "invalid arguments for calculator: expression: missing", None),
        ({"tool": "calculator", "args": {"expression": "1", "x": 2}}, False, "invalid arguments for calculator: x: extra_forbidden", None),
        ({"tool": "plan-subagent", "args": {"note": "x"}}, False, "unknown tool 'plan-subagent'; available tools: calculator", None),
        ({"tool": "", "args": {}}, False, "unknown tool '(empty)'", None),
        ({"tool": "nofunc", "args": {}}, False, "unknown tool 'nofunc'", None),
        ({"tool": "crash", "args": {}}, False, "crash failed: KeyError", "abc.def.ghi"),
        ({"tool": "boom", "args": {}}, False, "boom failed: OSError", "/var/lib"),
        ({"tool": "refuse", "args": {}}, False, "refused https://[redacted]@host", "sk-refusal"),
        ({"tool": "refuse", "args": {}}, False, "refused", "pw-secret"),
        ({"tool": "calculator", "args": {}, "error": "invalid tool call: calls.0.tool: string_pattern_mismatch"}, False, "invalid tool call", None),
        ({"tool": "shout", "args": {}}, True, "AAAA", None),
        ({"tool": "read_doc", "args": {"uri": "docs://../../etc/passwd"}}, False, "read_doc: path escapes", None),
        ({"tool": "http_get", "args": {"url": "http://169.254.169.254/latest"}}, False, "http_get refused", None),
    ],
)
def test_run_tool(tools, call, ok, expected, forbidden):
    got_ok, output = run_tool(tools, call)
    assert got_ok is ok
    assert output.startswith(expected)
    assert len(output) <= 4000
    if forbidden:
        assert forbidden not in output
