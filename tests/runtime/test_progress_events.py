"""Progress: custom stream events with exact keys, redacted bounded summaries, failures marked."""

from __future__ import annotations

from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from reins.runtime.persistence.checkpoint import open_checkpointer
from reins.runtime.execution.progress import EVENT_TYPE, SUMMARY_LIMIT, Progress

KEYS = {"type", "workflow", "run_id", "step", "status", "title", "summary", "duration_ms"}


@pytest.fixture
def recorded() -> tuple[Progress, list[dict]]:
    events: list[dict] = []
    return Progress("delivery_chain", "run-1", emit=events.append), events


def test_events_have_exactly_the_documented_keys(recorded):
    progress, events = recorded
    progress.start("Delivery chain")
    with progress.step("load", "Load context") as handle:
        handle.summary = "requirement read"
    progress.skipped("revise-plan", "Revise plan", "no revision needed")
    progress.end("pass", "status pass")

    assert [set(event) for event in events] == [KEYS] * 5
    assert [(e["step"], e["status"]) for e in events] == [
        ("start", "running"),
        ("load", "running"),
        ("load", "completed"),
        ("revise-plan", "skipped"),
        ("end", "completed"),
    ]
    assert all(e["type"] == EVENT_TYPE and e["workflow"] == "delivery_chain" and e["run_id"] == "run-1" for e in events)
    assert events[2]["summary"] == "requirement read"
    assert isinstance(events[2]["duration_ms"], int) and events[2]["duration_ms"] >= 0


def test_summaries_are_redacted_and_bounded(recorded):
    progress, events = recorded
    with progress.step("plan", "Plan") as handle:
        handle.summary = "used sk-abcdefghijklmnop1234 from /home/alice/.env " + "x" * 500

    summary = events[-1]["summary"]
    assert len(summary) <= SUMMARY_LIMIT
    assert "sk-abcdefgh" not in summary and "/home/alice" not in summary


def test_a_raising_step_is_marked_failed_and_the_error_propagates(recorded):
    progress, events = recorded
    with pytest.raises(ValueError, match="boom"):
        with progress.step("delegate-plan", "Delegate plan"):
            raise ValueError("boom at /srv/app/secret.py")

    assert [(e["step"], e["status"]) for e in events] == [("delegate-plan", "running"), ("delegate-plan", "failed")]
    assert events[-1]["summary"] == "ValueError"  # the type, never the message (it may hold secrets)


def test_handle_status_and_failed_end(recorded):
    progress, events = recorded
    with progress.step("review", "Review") as handle:
        handle.status, handle.summary = "failed", "2 of 3 reviewers completed"
    progress.end("failed", "no plan")
    assert [(e["step"], e["status"]) for e in events] == [("review", "running"), ("review", "failed"), ("end", "failed")]


def test_unknown_status_is_refused(recorded):
    progress, _ = recorded
    with pytest.raises(ValueError, match="unknown progress status"):
        progress.event("x", "done", "X")


def test_outside_a_graph_progress_is_a_silent_no_op():
    progress = Progress("tasklist_agent", "run-2")
    progress.start("Tasklist")
    with progress.step("read-plan", "Read plan") as handle:
        handle.summary = "plan read"
    assert progress.event("x", "completed", "X")["status"] == "completed"  # built, sent nowhere


class _State(TypedDict, total=False):
    value: int


def _work(state: _State) -> _State:
    progress = Progress("tiny", "run-3")  # built inside the node: it finds the run's stream writer
    progress.start("Tiny graph")
    with progress.step("double", "Double the value") as handle:
        value = state["value"] * 2
        handle.summary = f"value is now {value}"
    progress.end("pass", "done")
    return {"value": value}


def test_inside_a_graph_events_arrive_on_the_custom_stream():
    builder = StateGraph(_State)
    builder.add_node("work", _work)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    graph = builder.compile()

    chunks = list(graph.stream({"value": 21}, stream_mode=["custom", "values"]))

    custom = [payload for mode, payload in chunks if mode == "custom"]
    assert [(e["step"], e["status"]) for e in custom] == [
        ("start", "running"),
        ("double", "running"),
        ("double", "completed"),
        ("end", "completed"),
    ]
    assert custom[2]["summary"] == "value is now 42"
    assert [payload for mode, payload in chunks if mode == "values"][-1] == {"value": 42}


def _pause(state: _State) -> _State:
    progress = Progress("tiny", "run-4")
    with progress.step("review", "Human review"):
        answer = interrupt({"question": "approve?"})
    return {"value": int(answer)}


def test_a_pause_for_a_human_is_not_a_failure():
    builder = StateGraph(_State)
    builder.add_node("pause", _pause)
    builder.add_edge(START, "pause")
    builder.add_edge("pause", END)
    with open_checkpointer("memory") as saver:
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}}
        custom = [payload for payload in graph.stream({"value": 1}, config, stream_mode="custom")]

    assert [(e["step"], e["status"]) for e in custom] == [("review", "running")]
