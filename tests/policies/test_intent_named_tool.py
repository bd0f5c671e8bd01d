"""A request that names a listed tool is a tool request even when the model called it QA (table)."""

from __future__ import annotations

import pytest

from reins.policies.assistant.intent import named_tool, settled_intent

TOOLS = ("calculator", "notes__add_note", "web_fetch", "clock")


@pytest.mark.parametrize(
    ("model_intent", "request_text", "expected"),
    [
        ("QA", "Use the calculator: what is (17+25)*3?", ("SIMPLE_TOOL", "the request asks for the tool calculator")),
        ("QA", 'use notes__add_note on "buy milk"', ("SIMPLE_TOOL", "the request asks for the tool notes__add_note")),
        ("QA", "please call add_note with buy milk", ("SIMPLE_TOOL", "the request asks for the tool notes__add_note")),
        ("QA", "with the   web fetch tool, read example.org", ("SIMPLE_TOOL", "the request asks for the tool web_fetch")),
        ("QA", "what is (17+25)*3?", ("QA", None)),  # no tool named: the model's answer stands
        ("QA", "is a calculator better than mental arithmetic?", ("QA", None)),  # named, not asked for
        ("QA", "use the calculators of old", ("QA", None)),  # another word that starts like a tool
        ("QA", "use the abacus", ("QA", None)),  # not a listed tool
        ("COMPLEX", "use the calculator twice", ("COMPLEX", None)),  # never lowered or changed
        ("SIMPLE_TOOL", "use the clock", ("SIMPLE_TOOL", None)),
    ],
)
def test_qa_is_raised_only_for_a_request_that_asks_for_a_listed_tool(model_intent, request_text, expected):
    assert settled_intent(model_intent, request_text, TOOLS) == expected


def test_no_tools_listed_means_nothing_is_named():
    assert named_tool("use the calculator", ()) is None
