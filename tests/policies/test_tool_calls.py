"""policies/tools/calls.py: which calls run, pause or batch; what a decision or an answer may be."""

from __future__ import annotations

import pytest

from reins.policies.tools.calls import (
    Decision,
    batch,
    question_allowed,
    read_answer,
    read_decision,
    rejection_observation,
    should_dispatch_again,
)


@pytest.mark.parametrize(
    ("executions", "count"),
    [
        ((), 0),
        (("run",), 1),
        (("run", "run", "run"), 3),
        (("run", "run", "run", "run"), 3),  # at most three together
        (("run", "ask", "run"), 1),  # a side effect is never batched
        (("ask", "run"), 1),
        (("question", "question"), 1),
        (("run", "question"), 1),
    ],
)
def test_batch(executions, count):
    assert batch(executions) == count


@pytest.mark.parametrize(("asked", "allowed"), [(0, True), (1, True), (2, False), (5, False)])
def test_question_allowed(asked, allowed):
    assert question_allowed(asked) is allowed


@pytest.mark.parametrize(
    ("value", "decision"),
    [
        ({"type": "approve"}, Decision("approve")),
        ({"type": "reject", "reason": "  not   now "}, Decision("reject", reason="not now")),
        ({"type": "edit", "args": {"text": "x"}}, Decision("edit", args={"text": "x"})),
        ({"type": "reject"}, Decision(problem="a rejection needs a non-empty reason")),
        ({"type": "reject", "reason": " "}, Decision(problem="a rejection needs a non-empty reason")),
        ({"type": "edit", "args": "x"}, Decision(problem="an edit needs args: a JSON object of the tool's arguments")),
        ({"type": "approve", "args": {}}, Decision(problem="unexpected field(s) for approve: args")),
        ({"type": "yes"}, Decision(problem="decision type must be approve, reject or edit")),
        ("approve", Decision(problem='a decision is a JSON object such as {"type": "approve"}')),
        (None, Decision(problem='a decision is a JSON object such as {"type": "approve"}')),
    ],
)
def test_read_decision(value, decision):
    assert read_decision(value) == decision


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [
        ("Paris", None, ("Paris", "")),
        ({"answer": " Paris  "}, None, ("Paris", "")),
        ("Paris", ["Paris", "Tokyo"], ("Paris", "")),
        ("2", ["Paris", "Tokyo"], ("Tokyo", "")),
        ("3", ["Paris", "Tokyo"], ("", "answer with one of the options: Paris, Tokyo")),
        ("", None, ("", 'an answer is a non-empty string (or {"answer": "..."})')),
        (7, None, ("", 'an answer is a non-empty string (or {"answer": "..."})')),
    ],
)
def test_read_answer(value, options, expected):
    assert read_answer(value, options) == expected


@pytest.mark.parametrize(
    ("read_only", "failure", "dispatches", "again"),
    [
        (True, "connection", 1, True),
        (True, "connection", 2, False),  # once more, not twice
        (False, "connection", 1, False),  # a side effect may have happened
        (True, "deadline", 1, False),  # a hang would hang again
        (True, "tool_error", 1, False),
    ],
)
def test_should_dispatch_again(read_only, failure, dispatches, again):
    assert should_dispatch_again(read_only, failure, dispatches) is again


def test_rejection_observation():
    assert rejection_observation("no") == "rejected by the user: no"
