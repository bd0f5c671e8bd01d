"""Retention and durability rules for CLI runs: which threads are pruned, listed, and how a run's
status and resume command read."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from reins.policies.assistant.retention import (
    check_prune_days,
    durability_for,
    graph_of,
    latest_per_thread,
    newest_first,
    resume_command,
    run_status,
    threads_to_prune,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


@pytest.mark.parametrize(("can_pause", "mode"), [(True, "sync"), (False, "async")])
def test_durability(can_pause, mode):
    assert durability_for(can_pause) == mode


ACTIVITY = {"old": ago(40), "older": ago(90), "edge": ago(30), "fresh": ago(1), "now": NOW}


@pytest.mark.parametrize(
    ("days", "pruned"),
    [
        (30, ["older", "old"]),  # exactly 30 days idle is not more than 30
        (29.5, ["older", "old", "edge"]),
        (100, []),
        (0, ["older", "old", "edge", "fresh"]),  # 0: everything idle at all, never the present
    ],
)
def test_threads_to_prune(days, pruned):
    assert threads_to_prune(ACTIVITY, NOW, days) == pruned


@pytest.mark.parametrize("days", [-1, float("nan"), float("inf"), 36_501])
def test_prune_days_must_be_sensible(days):
    with pytest.raises(ValueError, match="--prune"):
        check_prune_days(days)
    with pytest.raises(ValueError):
        threads_to_prune(ACTIVITY, NOW, days)


def test_newest_first_and_latest_per_thread():
    entries = [("a", ago(5)), ("b", ago(2)), ("a", ago(1)), ("c", ago(3)), ("b", ago(9))]
    latest = latest_per_thread(entries)
    assert latest == {"a": ago(1), "b": ago(2), "c": ago(3)}
    assert newest_first(latest, 2) == ["a", "b"]
    assert newest_first(latest, 10) == ["a", "b", "c"]
    assert newest_first(latest, 0) == []


@pytest.mark.parametrize(
    ("values", "paused", "status"),
    [
        ({"run_status": "pass"}, False, "pass"),
        ({"run_status": "blocked"}, False, "blocked"),
        ({"final_decision": "final_with_manual_review_items"}, False, "final_with_manual_review_items"),
        ({"final_decision": None, "status": "running"}, True, "paused"),
        ({"answer": {"verdict": "partial"}}, False, "answered (partial)"),
        ({"plan": {"value": {}}, "requirement_text": "x"}, False, "incomplete"),
        ({}, False, "incomplete"),
        ({"run_status": ""}, False, "incomplete"),
    ],
)
def test_run_status(values, paused, status):
    assert run_status(values, paused) == status


@pytest.mark.parametrize(
    ("graph", "status", "command"),
    [
        ("tasklist_agent", "paused", "reins resume t --decision '{\"type\": \"approve\"}'"),
        ("delivery_chain", "incomplete", "reins deliver --resume t"),
        ("delivery_chain", "pass", None),
        ("tasklist_agent", "final", None),
        ("tasklist_agent", "incomplete", "reins resume t"),
        ("assistant", "incomplete", "reins chat --thread t"),
        ("assistant", "answered (success)", "reins chat --thread t"),
    ],
)
def test_resume_command(graph, status, command):
    assert resume_command(graph, "t", status) == command


@pytest.mark.parametrize(
    ("thread", "meta", "graph"),
    [
        ("x", "delivery_chain", "delivery_chain"),
        ("deliver-abc", None, "delivery_chain"),
        ("tasklist-abc", "", "tasklist_agent"),
        ("chat-abc", 3, "assistant"),
        ("mine", None, "unknown"),
    ],
)
def test_graph_of(thread, meta, graph):
    assert graph_of(thread, meta) == graph


@pytest.mark.parametrize(
    ("fingerprint", "possibly_ran", "running", "command"),
    [
        ("ab12", False, False, "reins resume t --decision '{\"type\": \"approve\", \"fingerprint\": \"ab12\"}'"),
        ("ab12", True, False, "reins resume t --decision '{\"type\": \"mark_done\", \"fingerprint\": \"ab12\"}' "
                              "(or run_again, skip)"),
        ("", False, False, "reins resume t --decision '{\"type\": \"approve\"}'"),
        ("ab12", False, True, "reins resume t"),  # running now: no decision to offer, the command says where
    ],
)
def test_a_paused_call_is_resumed_with_its_fingerprint(fingerprint, possibly_ran, running, command):
    assert resume_command("assistant", "t", "paused", fingerprint, possibly_ran, running) == command


@pytest.mark.parametrize(
    ("wanted", "known", "closest"),
    [
        ("chat-grocerie", ["chat-taxes", "chat-groceries"], ["chat-groceries"]),
        ("chat-1", ["chat-1a", "chat-1b", "other"], ["chat-1a", "chat-1b"]),  # a prefix: every thread it starts
        ("chat-taxs", ["chat-taxes", "chat-tax", "zzz"], ["chat-taxes", "chat-tax"]),
        ("nothing-like", ["chat-taxes"], []),
        ("", ["chat-taxes"], []),
    ],
)
def test_closest_threads_for_a_mistyped_id(wanted, known, closest):
    from reins.policies.assistant.retention import closest_threads

    assert closest_threads(wanted, known) == closest
