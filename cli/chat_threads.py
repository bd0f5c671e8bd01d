"""Which conversation ``reins chat`` talks in: a new one, the latest (``-c``), a named one that must
exist (``--thread``, refused with the closest ids when it does not), or a new one by name
(``--new-thread``)."""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from reins.policies.text.redaction import redact
from reins.policies.assistant.retention import closest_threads
from reins.cli.errors import UserError

CHAT_GRAPH = "assistant"
SCANNED_THREADS = 1000  # how many recent threads -c and "did you mean" look through


def new_thread_id() -> str:
    return f"chat-{uuid.uuid4().hex[:12]}"


def chat_threads(saver: Any) -> list[str]:
    """The home's chat threads, most recently active first."""
    from reins.runtime.persistence.runs import recent_runs

    return [run.thread_id for run in recent_runs(saver, SCANNED_THREADS) if run.graph == CHAT_GRAPH]


def chosen_thread(args: argparse.Namespace, saver: Any, durable: bool) -> tuple[str, bool]:
    """(the thread, whether it existed before). ``durable``: the checkpointer outlives the process
    (with REINS_CHECKPOINT=memory no thread exists before, so a named one is not looked up)."""
    if args.continue_latest:
        latest = chat_threads(saver)[:1] if durable else []
        if not latest:
            raise UserError("there is no earlier chat to continue in this home; start one with: reins chat")
        return latest[0], True
    if args.new_thread is not None:
        wanted = _checked_id(args.new_thread, "--new-thread")
        if durable and _summary(saver, wanted) is not None:
            raise UserError(f"thread {redact(wanted, 128)} exists; continue it with: reins chat --thread {redact(wanted, 128)}")
        return wanted, False
    if args.thread is None:
        return new_thread_id(), False
    wanted = _checked_id(args.thread, "--thread")
    if not durable:
        return wanted, False
    summary = _summary(saver, wanted)
    if summary is None:
        raise UserError(unknown_thread(wanted, chat_threads(saver)))
    if summary.graph not in (CHAT_GRAPH, "unknown"):
        how = f"; continue it with: {summary.resume}" if summary.resume else ""
        raise UserError(f"thread {redact(wanted, 128)} is a {summary.graph} run, not a chat{how}")
    return wanted, True


def unknown_thread(wanted: str, known: list[str]) -> str:
    shown = redact(wanted, 128)
    close = closest_threads(wanted, known)
    hint = f"did you mean {' or '.join(redact(thread, 128) for thread in close)}? " if close else ""
    return (f"no chat thread {shown} in this home; {hint}(reins chat -c continues the latest; "
            f"reins chat --new-thread {shown} starts one by that name)")


def _checked_id(value: str, option: str) -> str:
    text = value.strip()
    if not text:
        raise UserError(f"{option} needs a thread id")
    return text


def _summary(saver: Any, thread: str) -> Any:
    from reins.runtime.persistence.runs import summarise

    return summarise(saver, thread)
