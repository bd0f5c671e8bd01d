"""How long CLI runs are kept and how often they are checkpointed.

Pure functions: the CLI reads checkpoints, these decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Literal

MAX_PRUNE_DAYS = 36_500

# LangGraph's checkpoint persistence modes, most durable first.
Durability = Literal["sync", "async", "exit"]


def durability_for(can_pause: bool) -> Durability:
    """Every CLI run is checkpointed after every step, so a hard kill loses at most the step in
    flight (and never a completed model call). A run that may pause for a human waits for each
    save (``sync``): it is resumed later, possibly from another process, and its pause must be on
    disk before the process exits. Any other run saves in the background while the next step runs
    (``async``): next to a model call that takes seconds the save costs nothing a user can see.
    """
    return "sync" if can_pause else "async"


def check_prune_days(days: float) -> float:
    """The age limit for ``reins runs --prune DAYS``: a finite number of days, at least 0."""
    if not (days == days and 0 <= days <= MAX_PRUNE_DAYS):  # days == days is False for NaN
        raise ValueError(f"--prune takes a number of days between 0 and {MAX_PRUNE_DAYS}")
    return float(days)


def threads_to_prune(last_activity: Mapping[str, datetime], now: datetime, days: float) -> list[str]:
    """Threads whose last checkpoint is older than ``days`` before ``now``, oldest first."""
    cutoff = now - timedelta(days=check_prune_days(days))
    stale = [(when, thread) for thread, when in last_activity.items() if when < cutoff]
    return [thread for _, thread in sorted(stale)]


def newest_first(last_activity: Mapping[str, datetime], limit: int) -> list[str]:
    """The ``limit`` most recently active threads, newest first (ties by thread id)."""
    ordered = sorted(last_activity.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return [thread for thread, _ in ordered[: max(0, limit)]]


def latest_per_thread(entries: Iterable[tuple[str, datetime]]) -> dict[str, datetime]:
    """The last activity of each thread from (thread, checkpoint time) pairs in any order."""
    latest: dict[str, datetime] = {}
    for thread, when in entries:
        if thread not in latest or when > latest[thread]:
            latest[thread] = when
    return latest


# Thread-id prefixes the CLI gives its runs, for threads whose checkpoints carry no graph name.
THREAD_PREFIXES: Mapping[str, str] = {"deliver-": "delivery_chain", "tasklist-": "tasklist_agent", "chat-": "assistant"}


def graph_of(thread_id: str, metadata_graph: object) -> str:
    if isinstance(metadata_graph, str) and metadata_graph:
        return metadata_graph
    return next((graph for prefix, graph in THREAD_PREFIXES.items() if thread_id.startswith(prefix)), "unknown")


def run_status(values: Mapping[str, object], paused: bool) -> str:
    """What a thread's latest checkpoint says about its run.

    ``paused`` (waiting for a review decision) wins; then the graph's own final status (delivery
    ``run_status``, tasklist ``final_decision``, assistant answer verdict); a run with none of these
    stopped before its end (``incomplete``: a crash or Ctrl-C).
    """
    if paused:
        return "paused"
    for key in ("run_status", "final_decision"):
        value = values.get(key)
        if isinstance(value, str) and value:
            return value
    answer = values.get("answer")
    if isinstance(answer, Mapping) and isinstance(answer.get("verdict"), str):
        return f"answered ({answer['verdict']})"
    return "incomplete"


def resume_command(graph: str, thread_id: str, status: str, fingerprint: str = "",
                   possibly_ran: bool = False, running: bool = False) -> str | None:
    """How to continue a run from the command line, or None when there is nothing to continue. A
    paused call's ``fingerprint`` binds the decision to it; a call that ``possibly_ran`` (dispatched,
    its holder gone, no result recorded) is answered run_again, mark_done or skip, never approved
    again; a call ``running`` now (its holder is live) takes no decision: the command shows where."""
    if status == "paused" and running:
        return f"reins resume {thread_id}"
    if status == "paused":
        kind = "mark_done" if possibly_ran else "approve"
        bound = f', "fingerprint": "{fingerprint}"' if fingerprint else ""
        more = " (or run_again, skip)" if possibly_ran else ""
        return f"reins resume {thread_id} --decision '{{\"type\": \"{kind}\"{bound}}}'{more}"
    if status == "incomplete" and graph == "delivery_chain":
        return f"reins deliver --resume {thread_id}"
    if status == "incomplete" and graph == "tasklist_agent":
        return f"reins resume {thread_id}"
    if graph == "assistant":
        return f"reins chat --thread {thread_id}"
    return None


def closest_threads(wanted: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """The known thread ids a mistyped ``wanted`` most likely meant, closest first: those that
    start with it, then those spelled alike."""
    from difflib import get_close_matches

    known = list(dict.fromkeys(known))
    started = [thread for thread in known if wanted and thread.startswith(wanted) and thread != wanted]
    alike = get_close_matches(wanted, known, n=limit, cutoff=0.6)
    return list(dict.fromkeys([*started, *alike]))[:limit]
