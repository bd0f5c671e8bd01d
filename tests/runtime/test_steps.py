"""runtime/execution/steps.py: a request's outcome (unwrapped value or failure code plus metrics) under both
drivers, the metrics merged into the node's update, and a recorded step whose trace record is the
summary its progress event shows."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.errors import GraphInterrupt
from langgraph.types import Command, Overwrite

from reins.runtime.execution.calls import adrive, drive
from reins.runtime.contracts import ContractError, ContractIssue, ContractTimeout, Contracted, TextResult, ToolTurn
from reins.runtime.execution.deadline import DeadlineExceeded
from reins.runtime.llm.model_calls import merge_metrics
from reins.runtime.execution.progress import SUMMARY_LIMIT, Progress
from reins.runtime.execution.steps import (
    METRICS_KEY,
    Attempt,
    attempt,
    failure_code,
    failure_label,
    metered,
    recorded_step,
    trace_record,
    unwrapped,
)

METRICS = {"assistant.answer": {"business_calls": 1, "repair_calls": 1}}


@dataclass(frozen=True)
class Fixed:
    """A request whose result (or failure) is fixed."""

    outcome: Any

    def run(self) -> Any:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    async def arun(self) -> Any:
        return self.run()


def run_both(steps_for) -> list[Any]:
    """The node's update under ``drive`` and under ``adrive``."""
    return [drive(steps_for()), asyncio.run(adrive(steps_for()))]


def attempting(outcome: Any):
    def steps():
        result = yield from attempt(Fixed(outcome))
        return result

    return steps


CONTRACTED = Contracted(value={"verdict": "success"}, metrics=METRICS)
INVALID = ContractError("assistant.answer", [ContractIssue("$.verdict", "literal_error")], METRICS)
LATE = ContractTimeout("assistant.answer", METRICS)


@pytest.mark.parametrize(
    ("outcome", "ok", "code", "metrics", "label"),
    [
        (CONTRACTED, True, "", METRICS, None),
        ({"status": "pass"}, True, "", {}, None),  # a subgraph's output carries no metrics
        (INVALID, False, "contract_failure", METRICS, "contract_failure ($.verdict: literal_error)"),
        (LATE, False, "timeout", METRICS, "timeout"),
        (TimeoutError("slow"), False, "timeout", {}, "timeout"),
        (DeadlineExceeded(2.0), False, "timeout", {}, "timeout"),
        (RuntimeError("boom"), False, "execution_failed", {}, "execution_failed (RuntimeError)"),
        (ConnectionError("refused"), False, "execution_failed", {}, "execution_failed (ConnectionError)"),
    ],
)
def test_an_attempt_is_the_value_or_the_failure_with_its_code_and_metrics(outcome, ok, code, metrics, label):
    for result in run_both(attempting(outcome)):
        assert isinstance(result, Attempt)
        assert (result.ok, result.code, dict(result.metrics)) == (ok, code, metrics)
        if ok:
            assert result.value is unwrapped(outcome) and result.error is None and result.reason() == ""
        else:
            assert result.value is None and result.error is outcome
            assert failure_code(outcome) == code and failure_label(outcome) == label
            assert result.reason() and len(result.reason(20)) <= 20


def test_a_secret_in_a_failure_is_redacted_in_its_reason():
    [result, _] = run_both(attempting(RuntimeError("token=sk-abcdef1234567890ABCD")))
    assert "sk-abcdef1234567890ABCD" not in result.reason()


@pytest.mark.parametrize(
    "error",
    [asyncio.CancelledError(), KeyboardInterrupt(), GraphInterrupt(())],
    ids=["cancelled", "keyboard-interrupt", "graph-interrupt"],
)
def test_cancellation_and_interrupts_are_not_failures_and_propagate(error):
    with pytest.raises(type(error)):
        drive(attempting(error)())
    with pytest.raises(type(error)):
        asyncio.run(adrive(attempting(error)()))


def test_a_node_continues_after_a_failed_attempt():
    def steps():
        first = yield from attempt(Fixed(INVALID))
        second = yield from attempt(Fixed(CONTRACTED))
        return (first.code, second.value["verdict"])

    assert run_both(steps) == [("contract_failure", "success")] * 2


def recorder() -> tuple[Progress, list[dict]]:
    events: list[dict] = []
    return Progress("assistant", "run-1", emit=events.append), events


@pytest.mark.parametrize(
    ("summary", "status", "flags", "expected_flags"),
    [
        ("drafted", None, {}, {}),
        ("verdict partial; removed 1 claim(s)", "failed", {}, {}),
        ("no store", "skipped", {}, {}),
        ("guard refused draft", "failed", {"violation": True}, {"violation": True}),
        ("calculator: ok", None, {"plan_step": None}, {}),  # a flag that is None is left out
        ("fetched token=sk-abcdef1234567890ABCD from /home/me/x", None, {}, {}),
        ("x" * 500, None, {}, {}),
    ],
)
def test_the_trace_record_is_the_summary_the_progress_event_shows(summary, status, flags, expected_flags):
    progress, events = recorder()
    with recorded_step(progress, "answer", "Write the answer", **flags) as step:
        step.summary = summary
        if status:
            step.status = status
    record = step.trace()
    done = events[-1]
    assert [(e["step"], e["status"]) for e in events] == [("answer", "running"), ("answer", status or "completed")]
    assert record == {"step": "answer", "summary": done["summary"], **expected_flags}
    assert len(record["summary"]) <= SUMMARY_LIMIT and "sk-abcdef" not in record["summary"]
    assert "/home/me" not in record["summary"]


def test_flags_can_be_added_when_the_record_is_taken():
    progress, _ = recorder()
    with recorded_step(progress, "tool-1", "Tool step 1: calculator") as step:
        step.summary = "calculator: ok"
    assert step.trace(plan_step=2) == {"step": "tool-1", "summary": "calculator: ok", "plan_step": 2}
    assert step.trace() == {"step": "tool-1", "summary": "calculator: ok"}


def test_a_step_that_raises_is_marked_failed_and_the_error_propagates():
    progress, events = recorder()
    with pytest.raises(ValueError):
        with recorded_step(progress, "check", "Check the answer"):
            raise ValueError("bad")
    assert [(e["step"], e["status"]) for e in events] == [("check", "running"), ("check", "failed")]


def test_a_recorded_step_inside_a_node_generator_under_both_drivers():
    def steps(events):
        progress = Progress("assistant", "run-1", emit=events.append)
        with recorded_step(progress, "answer", "Write the answer") as step:
            outcome = yield from attempt(Fixed(LATE))
            if outcome.ok:
                step.summary = "drafted"
            else:
                step.fail(f"fallback ({outcome.code})")
        return {"trace": [step.trace()]}

    sync_events: list[dict] = []
    async_events: list[dict] = []
    expected = {"trace": [{"step": "answer", "summary": "fallback (timeout)"}], METRICS_KEY: merge_metrics({}, METRICS)}
    assert drive(metered(steps(sync_events))) == expected
    assert asyncio.run(adrive(metered(steps(async_events)))) == expected
    for events in (sync_events, async_events):
        assert [(e["status"], e["summary"]) for e in events] == [("running", ""), ("failed", "fallback (timeout)")]


@pytest.mark.parametrize(
    ("summary", "limit", "expected"),
    [
        ("read docs://versions/a.md (120 chars)", 300, "read docs://versions/a.md (120 chars)"),
        ("failed: api_key=sk-abcdef1234567890ABCD", 300, "failed: api_key=[redacted]"),
        ("y" * 400, 300, "y" * 299 + "…"),
    ],
)
def test_trace_record_redacts_and_cuts(summary, limit, expected):
    assert trace_record("step", summary, limit=limit) == {"step": "step", "summary": expected}


MESSAGE = AIMessage(content="", tool_calls=[{"name": "calculator", "args": {}, "id": "c1"}])


@pytest.mark.parametrize(
    ("result", "value"),
    [
        (Contracted(value={"verdict": "success"}, metrics=METRICS), {"verdict": "success"}),
        (TextResult(text="# Tasks", metrics=METRICS), "# Tasks"),
        (ToolTurn(message=MESSAGE, metrics=METRICS), MESSAGE),
        ({"status": "pass"}, {"status": "pass"}),  # a subgraph's output is the value itself
        ([], []),  # store items too
    ],
    ids=["contract", "text", "tool-turn", "subgraph", "store"],
)
def test_an_attempt_returns_the_unwrapped_value(result, value):
    for outcome in run_both(attempting(result)):
        assert outcome.value == value


OTHER = {"assistant.intent": {"business_calls": 1}}
SUM = merge_metrics(merge_metrics({}, METRICS), OTHER)  # every counter of both contracts, zeros included


def spending(update: Any):
    """A node that handles a failed call, makes a good one and a store read, then returns ``update``."""
    def steps():
        yield from attempt(Fixed(INVALID))  # a failure the node handled spent its calls too
        yield from attempt(Fixed(Contracted(value={}, metrics=OTHER)))
        yield from attempt(Fixed({"status": "pass"}))  # no metrics
        return update

    return lambda: metered(steps())


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        ({"draft": "x"}, {"draft": "x", METRICS_KEY: SUM}),
        (None, {METRICS_KEY: SUM}),
        ({METRICS_KEY: OTHER}, {METRICS_KEY: merge_metrics(SUM, OTHER)}),
    ],
    ids=["update", "no-update", "already-there"],
)
def test_metered_merges_what_every_request_spent_into_the_update(update, expected):
    assert run_both(spending(update)) == [expected] * 2


def test_metered_merges_into_a_commands_update_and_keeps_its_route():
    for command in run_both(spending(Command(update={"draft": "x"}, goto="check_and_reply"))):
        assert isinstance(command, Command) and command.goto == "check_and_reply"
        assert command.update == {"draft": "x", METRICS_KEY: SUM}


def test_a_reset_of_the_metrics_stays_a_reset_holding_what_the_node_spent():
    for update in run_both(spending({"trace": [], METRICS_KEY: Overwrite({})})):
        assert update["trace"] == [] and isinstance(update[METRICS_KEY], Overwrite)
        assert update[METRICS_KEY].value == SUM


def test_a_node_that_spends_nothing_returns_its_update_unchanged():
    def steps():
        yield from attempt(Fixed({"status": "pass"}))
        return {"draft": "x"}

    assert run_both(lambda: metered(steps())) == [{"draft": "x"}] * 2


@pytest.mark.parametrize(("mark", "status"), [("fail", "failed"), ("skip", "skipped")])
def test_a_step_is_marked_failed_or_skipped_with_its_summary(mark, status):
    progress, events = recorder()
    with recorded_step(progress, "answer", "Write the answer") as step:
        getattr(step, mark)("no answer (timeout)")
    assert (step.status, step.trace()) == (status, {"step": "answer", "summary": "no answer (timeout)"})
    assert (events[-1]["status"], events[-1]["summary"]) == (status, "no answer (timeout)")
