"""runtime/execution/calls.py: one generator per node, driven sync or async with the same outcomes."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from reins.runtime.execution.calls import Within, adrive, drive, inline, node
from reins.runtime.contracts import Contracted
from reins.runtime.llm.model_calls import merge_metrics
from reins.runtime.execution.steps import ContractMetrics, attempt
from reins.runtime.execution.deadline import DeadlineExceeded


@dataclass(frozen=True)
class Echo:
    """A request whose result (or failure) is fixed; records which driver made it."""

    value: Any
    log: list

    def run(self):
        self.log.append("sync")
        return self._result()

    async def arun(self):
        self.log.append("async")
        return self._result()

    def _result(self):
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


@dataclass(frozen=True)
class Sleep:
    seconds: float

    def run(self):
        time.sleep(self.seconds)
        return "slept"

    async def arun(self):
        await asyncio.sleep(self.seconds)
        return "slept"


def steps(log: list):
    first = yield Echo(2, log)
    try:
        yield Echo(ValueError("bad"), log)
    except ValueError as error:
        caught = str(error)
    second = yield Echo(3, log)
    return {"sum": first + second, "caught": caught}


def test_both_drivers_run_the_same_steps_and_raise_failures_at_the_yield():
    sync_log, async_log = [], []
    assert drive(steps(sync_log)) == {"sum": 5, "caught": "bad"}
    assert asyncio.run(adrive(steps(async_log))) == {"sum": 5, "caught": "bad"}
    assert sync_log == ["sync"] * 3 and async_log == ["async"] * 3


def test_an_unhandled_failure_leaves_the_node():
    def failing(log):
        yield Echo(KeyError("k"), log)
        return {"never": True}

    with pytest.raises(KeyError):
        drive(failing([]))
    with pytest.raises(KeyError):
        asyncio.run(adrive(failing([])))


def test_a_node_without_requests_returns_at_once_and_plain_functions_stay_plain():
    def nothing(state):
        if False:
            yield None
        return {"x": 1}

    def plain(state):
        return {"x": 2}

    assert drive(nothing({})) == {"x": 1}
    assert node(plain) is plain


def test_within_raises_deadline_exceeded_on_both_paths_and_passes_fast_results():
    assert Within(1.0, Sleep(0.01)).run() == "slept"
    assert asyncio.run(Within(1.0, Sleep(0.01)).arun()) == "slept"
    with pytest.raises(DeadlineExceeded):
        Within(0.05, Sleep(2)).run()
    started = time.perf_counter()
    with pytest.raises(DeadlineExceeded):
        asyncio.run(Within(0.05, Sleep(2)).arun())
    assert time.perf_counter() - started < 1.5  # cancelled, not awaited to the end


def test_a_call_timing_out_by_itself_is_not_mistaken_for_the_deadline():
    log: list = []
    with pytest.raises(TimeoutError) as raised:
        asyncio.run(Within(5, Echo(TimeoutError("provider"), log)).arun())
    assert not isinstance(raised.value, DeadlineExceeded)


class _S(TypedDict, total=False):
    n: int
    path: str


def test_a_graph_node_gets_runtime_injection_and_runs_on_the_path_the_caller_chose():
    log: list = []

    def bump(state: _S, runtime: Any):
        assert hasattr(runtime, "context") and hasattr(runtime, "store")  # LangGraph's Runtime was injected
        value = yield Echo(state["n"] + 1, log)
        return {"n": value, "path": log[-1]}

    builder = StateGraph(_S)
    builder.add_node("bump", node(bump))
    builder.add_edge(START, "bump")
    builder.add_edge("bump", END)
    graph = builder.compile()
    assert graph.invoke({"n": 1}) == {"n": 2, "path": "sync"}
    assert asyncio.run(graph.ainvoke({"n": 1})) == {"n": 2, "path": "async"}


class _Metered(TypedDict, total=False):
    n: int
    bound: str
    contract_metrics: ContractMetrics


def test_dependencies_bind_by_keyword_and_what_the_calls_spent_reaches_state():
    """node(fn, deps=...) and inline(fn, deps=...) bind a node's dependencies; each model call's
    metrics are added to the node's update by the runtime, then to state by the key's reducer."""
    spent = {"demo.count": {"business_calls": 1, "input_tokens": 5}}

    def count(state: _Metered, runtime: Any, *, deps: str):
        assert hasattr(runtime, "context")  # the binding keeps LangGraph's injection
        outcome = yield from attempt(Echo(Contracted(value=state["n"] + 1, metrics=spent), []))
        return {"n": outcome.value, "bound": deps}

    def again(state: _Metered, *, deps: str):
        return {"bound": state["bound"] + deps}

    builder = StateGraph(_Metered)
    builder.add_node("first", node(count, deps="a"))
    builder.add_node("second", node(count, "second", deps="b"))
    builder.add_node("third", inline(again, deps="c"))
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", "third")
    builder.add_edge("third", END)
    graph = builder.compile()
    twice = merge_metrics(merge_metrics({}, spent), spent)
    expected = {"n": 3, "bound": "bc", "contract_metrics": twice}
    assert twice["demo.count"]["business_calls"] == 2 and twice["demo.count"]["input_tokens"] == 10
    assert graph.invoke({"n": 1}) == expected
    assert asyncio.run(graph.ainvoke({"n": 1})) == expected
