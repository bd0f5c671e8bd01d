"""A wall-clock deadline around a blocking call, for nodes that must not wait forever.

Under ``ainvoke`` a deadline is an ``asyncio`` timeout (``runtime.calls.Within``); a blocking call
on the sync path (``invoke``, e.g. a reviewer in a parallel group) cannot be cancelled and gets its
limit here instead. The call runs in a daemon thread with the caller's context (so LangChain
config, callbacks and the stream writer still apply); when the deadline passes the caller gets
``DeadlineExceeded`` at once and the abandoned call can never hold the process open.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """The call did not finish within its deadline."""

    def __init__(self, seconds: float):
        super().__init__(f"no result within {seconds:g} s")
        self.seconds = seconds


# When the innermost deadline around the current call passes (time.monotonic), so a retry never
# waits past it (runtime.contracts reads it; a Retry-After longer than what is left is final).
_DEADLINE_AT: contextvars.ContextVar[float | None] = contextvars.ContextVar("reins_deadline_at", default=None)


def remaining_s() -> float | None:
    """Seconds left before the current deadline, or None when the call runs under none."""
    at = _DEADLINE_AT.get()
    return None if at is None else max(0.0, at - time.monotonic())


@contextmanager
def deadline_scope(seconds: float) -> Iterator[None]:
    """Mark the calls inside as running under a deadline ``seconds`` from now (an outer, earlier one stays)."""
    at = time.monotonic() + seconds
    outer = _DEADLINE_AT.get()
    token = _DEADLINE_AT.set(at if outer is None else min(outer, at))
    try:
        yield
    finally:
        _DEADLINE_AT.reset(token)


def _scoped(fn: Callable[[], T], seconds: float) -> T:
    with deadline_scope(seconds):
        return fn()


def call_with_deadline(fn: Callable[[], T], seconds: float, name: str = "reins-deadline") -> T:
    """Return ``fn()`` or raise its exception; raise ``DeadlineExceeded`` after ``seconds``."""
    context = contextvars.copy_context()
    done = threading.Event()
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = context.run(_scoped, fn, seconds)
        except BaseException as error:  # handed to the caller below
            box["error"] = error
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    if not done.wait(seconds):
        raise DeadlineExceeded(seconds)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
