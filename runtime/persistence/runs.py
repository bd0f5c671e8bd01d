"""Runs kept by a checkpointer: list the recent threads, prune the old ones.

Works on any LangGraph checkpointer (memory, SQLite, PostgreSQL) through its public ``list``,
``get_tuple`` and ``delete_thread``; the decisions (what is old, what a status is) are the pure
functions of ``reins.policies.assistant.retention``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from reins.policies.assistant.retention import graph_of, latest_per_thread, newest_first, resume_command, run_status, threads_to_prune

INTERRUPT = "__interrupt__"


@dataclass(frozen=True)
class RunSummary:
    thread_id: str
    graph: str
    status: str
    paused: bool
    resumable: bool
    updated_at: str
    resume: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _when(checkpoint: Any) -> datetime:
    try:
        when = datetime.fromisoformat(str(checkpoint.get("ts", "")))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _activity(saver: Any) -> Iterator[tuple[str, datetime]]:
    for item in saver.list(None):
        configurable = item.config.get("configurable", {})
        if configurable.get("checkpoint_ns"):  # a subgraph's checkpoint belongs to its parent's thread
            continue
        yield str(configurable.get("thread_id")), _when(item.checkpoint)


def _paused_call(pending_writes: Any) -> tuple[str, str]:
    """The fingerprint of a call paused for approval, and the state of its newest claim ("" when it
    was not dispatched; live, stale or gone: ``reins.policies.tools.claims``)."""
    from reins.policies.tools.approvals import open_claim
    from reins.runtime.execution.dispatch import claims_in, observed

    for write in pending_writes:
        if write[1] != INTERRUPT:
            continue
        for pause in write[2] if isinstance(write[2], (list, tuple)) else [write[2]]:
            value = getattr(pause, "value", pause)
            if isinstance(value, dict) and value.get("fingerprint"):
                fingerprint = str(value["fingerprint"])
                latest = open_claim(observed(claims_in(pending_writes)).get(fingerprint, []))
                return fingerprint, latest.state if latest else ""
    return "", ""


def summarise(saver: Any, thread_id: str, *, durable: bool = True) -> RunSummary | None:
    item = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if item is None:
        return None
    values = item.checkpoint.get("channel_values") or {}
    paused = any(write[1] == INTERRUPT for write in item.pending_writes or ())
    graph = graph_of(thread_id, (item.metadata or {}).get("reins_graph"))
    status = run_status(values, paused)
    fingerprint, claim = _paused_call(item.pending_writes or ())
    command = (resume_command(graph, thread_id, status, fingerprint, claim in ("stale", "gone"), claim == "live")
               if durable else None)
    return RunSummary(
        thread_id=thread_id,
        graph=graph,
        status=status,
        paused=paused,
        resumable=command is not None and status in ("paused", "incomplete"),
        updated_at=_when(item.checkpoint).isoformat(timespec="seconds"),
        resume=command,
    )


def recent_runs(saver: Any, limit: int = 20, *, durable: bool = True) -> list[RunSummary]:
    """The ``limit`` most recently active threads, newest first."""
    threads = newest_first(latest_per_thread(_activity(saver)), limit)
    return [summary for thread in threads if (summary := summarise(saver, thread, durable=durable))]


def keep_latest_checkpoints(saver: Any, thread_id: str) -> int:
    """Delete every checkpoint of ``thread_id`` but the latest per namespace (and the writes of the
    deleted ones), when a run ends; a paused run keeps its pending writes. Returns how many
    checkpoints went (0 where the saver keeps no history worth pruning, e.g. memory)."""
    kind = type(saver).__name__
    if kind == "SqliteSaver":
        with saver.lock, saver.conn:
            keep = "SELECT checkpoint_ns, max(checkpoint_id) FROM checkpoints WHERE thread_id = ? GROUP BY checkpoint_ns"
            gone = saver.conn.execute(
                f"DELETE FROM checkpoints WHERE thread_id = ? AND (checkpoint_ns, checkpoint_id) NOT IN ({keep})",
                (thread_id, thread_id),
            ).rowcount
            saver.conn.execute(
                f"DELETE FROM writes WHERE thread_id = ? AND (checkpoint_ns, checkpoint_id) NOT IN ({keep})",
                (thread_id, thread_id),
            )
        return max(gone, 0)
    if kind == "PostgresSaver":
        before = sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}}))
        saver.prune([thread_id], strategy="keep_latest")
        return before - sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}}))
    return 0


def prune_runs(saver: Any, days: float, now: datetime | None = None) -> list[str]:
    """Delete every thread whose last checkpoint is older than ``days``; return their ids."""
    now = now or datetime.now(timezone.utc)
    stale = threads_to_prune(latest_per_thread(_activity(saver)), now, days)
    for thread in stale:
        saver.delete_thread(thread)
    conn = getattr(saver, "conn", None)
    if stale and conn is not None and type(saver).__name__ == "SqliteSaver":
        conn.execute("VACUUM")  # SQLite keeps freed pages until vacuumed: give the space back
    return stale
