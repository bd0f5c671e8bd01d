"""Every bad input gets one line naming the field: a TypeError/ValueError when the graph is built
or the input is read (before any model call and before anything is saved), exit 2 on the CLI."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reins.cli import main
from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.delivery_chain import build_graph as build_delivery
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from reins.nodes.delivery.context import DeliveryContext
from reins.policies.delivery.delegation import DEFAULT_POLICY
from reins.policies.delivery.input import check_review_timeout
from reins.runtime.standins.scripted import ScriptedModel
from tests.delivery.test_delivery_cli_runs import sqlite_env  # noqa: F401  the CLI in a fresh directory, SQLite checkpoints

TIMEOUTS = [
    (None, None, None),
    (30, 30.0, None),
    (0.5, 0.5, None),
    (3600, 3600.0, None),
    ("30", None, TypeError),
    (True, None, TypeError),
    ([1], None, TypeError),
    (0, None, ValueError),
    (-5, None, ValueError),
    (3601, None, ValueError),
    (math.nan, None, ValueError),
    (math.inf, None, ValueError),
]


@pytest.mark.parametrize(("value", "expected", "error"), TIMEOUTS)
def test_review_timeout(value, expected, error):
    if error is None:
        assert check_review_timeout(value) == expected
        return
    with pytest.raises(error, match="review_timeout_s"):
        check_review_timeout(value)


@pytest.mark.parametrize(
    ("build", "error", "field"),
    [
        (lambda: build_delivery(review_timeout_s="5"), TypeError, "review_timeout_s"),
        (lambda: build_delivery(review_timeout_s=-1), ValueError, "review_timeout_s"),
        (lambda: build_delivery(policy=None), TypeError, "policy"),
        (lambda: build_delivery(policy=replace(DEFAULT_POLICY)), None, None),
        (lambda: DeliveryContext(review_timeout_s="5"), TypeError, "review_timeout_s"),
        # Built without one it can run as a subgraph on the parent's; alone it is refused at run time.
        (lambda: build_tasklist(human_review=True), None, None),
        (lambda: build_tasklist(human_review=True, checkpointer=InMemorySaver()), None, None),
    ],
    ids=["timeout-string", "timeout-negative", "policy-none", "policy-ok", "context-timeout-string",
         "review-as-a-subgraph", "review-with-checkpointer"],
)
def test_bad_options_fail_when_the_graph_is_built(build, error, field):
    if error is None:
        assert build() is not None
        return
    with pytest.raises(error, match=field):
        build()


def test_a_review_asked_for_in_the_context_needs_a_checkpointer():
    import asyncio

    scripted = ScriptedModel({})
    graph = build_tasklist(models=scripted)  # no checkpointer: a pause could never be resumed
    plan = {"request": "/tasklist docs://versions/v0.2.0-ready.md"}
    with pytest.raises(ValueError, match="human_review needs a checkpointer"):
        graph.invoke(plan, context={"human_review": True})
    with pytest.raises(ValueError, match="human_review needs a checkpointer"):
        asyncio.run(graph.ainvoke(plan, None, context={"human_review": True}))
    assert scripted.contracts_called() == []
    from reins.runtime.standins.offline import OfflineModel

    with_saver = build_tasklist(models=OfflineModel(), checkpointer=InMemorySaver())
    paused = with_saver.invoke(plan, {"configurable": {"thread_id": "t"}}, context={"human_review": True})
    assert paused["__interrupt__"][0].value["kind"] == "strategy_review"


@pytest.mark.parametrize(
    ("build", "inputs", "field"),
    [
        (build_tasklist, {"request": 5}, "request"),
        (build_tasklist, {"plan_uri": ["docs://versions/v0.2.0-ready.md"]}, "plan_uri"),
        (build_delivery, {"requirement": {"text": "x"}}, "requirement"),
        (build_delivery, {"requirement_uri": 7}, "requirement_uri"),
        (build_delivery, ["a requirement"], "input"),
        (build_assistant, {"messages": [42]}, "messages"),
    ],
    ids=["request-int", "plan-uri-list", "requirement-dict", "requirement-uri-int", "input-list", "messages-int"],
)
@pytest.mark.parametrize("call", ["invoke", "ainvoke"])
def test_bad_input_fails_when_read_before_any_call_or_write(build, inputs, field, call):
    import asyncio

    scripted = ScriptedModel({})  # any model call would raise UnscriptedCallError instead
    saver = InMemorySaver()
    graph = build(models=scripted, checkpointer=saver)
    config = {"configurable": {"thread_id": "bad"}}
    with pytest.raises(TypeError, match=field):
        if call == "invoke":
            graph.invoke(inputs, config)
        else:
            asyncio.run(graph.ainvoke(inputs, config))
    assert scripted.contracts_called() == []
    assert list(saver.list(None)) == []  # nothing was saved


def test_cli_bad_input_is_one_line_and_exit_2_and_writes_nothing(sqlite_env, capsys):
    assert main(["chat", "--once", ""]) == 2
    home = sqlite_env.parent
    assert not home.exists() or not any(home.iterdir())  # refused before any database was created
    deep = "[" * 100_000 + "]" * 100_000
    assert main(["resume", "tasklist-x", "--decision", deep]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "--decision must be JSON" in err and "nested deeper" in err


def test_deliver_resume_of_a_tasklist_thread_is_refused(sqlite_env, capsys):
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--json"]) == 0
    thread = json.loads(capsys.readouterr().out)["thread_id"]
    assert main(["deliver", "--resume", thread]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "not a delivery run" in captured.err and captured.err.count("\n") == 1
    assert main(["resume", thread]) == 2  # finished: nothing to continue, nothing to decide
    assert "resume refused" in capsys.readouterr().err
