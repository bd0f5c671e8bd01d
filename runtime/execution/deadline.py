"""A wall-clock deadline around a blocking call, for nodes that must not wait forever; and a way to
stop waiting for every blocking model call at once (Ctrl-C in the command line).

Under ``ainvoke`` a deadline is an ``asyncio`` timeout (``reins.runtime.execution.calls.Within``); a blocking call
on the sync path (``invoke``, e.g. a reviewer in a parallel group) cannot be cancelled and gets its
limit here instead. The call runs in a daemon thread with the caller's context (so LangChain
config, callbacks and the stream writer still apply); when the deadline passes the caller gets
``DeadlineExceeded`` at once and the abandoned call can never hold the process open.

Inside ``cancellable()`` (the CLI opens it around a run) every model call on the sync path is made
that way, and ``cancel()`` ends all their waits at once with ``Cancelled`` (a ``KeyboardInterrupt``):
each node stops as if interrupted, LangGraph saves the run as it does for an interrupt, and a call
that hangs is abandoned instead of holding the process for minutes.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
_POLL_S = 0.05  # how often a wait inside cancellable() looks for a cancellation
# The cancellation of the open cancellable() scopes. Closing the last scope replaces it rather than
# clearing it: a call still waiting then (Ctrl-C unwinds the main thread first) keeps seeing it.
_cancelled = [threading.Event()]
_open = [0]  # how many cancellable() scopes are open
_scopes = threading.Lock()


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


def _scoped(fn: Callable[[], T], seconds: float | None) -> T:
    if seconds is None:
        return fn()
    with deadline_scope(seconds):
        return fn()


class Cancelled(KeyboardInterrupt):
    """The run was cancelled while this call was waiting; the call itself was abandoned."""


def cancel() -> None:
    """End every wait of ``call_with_deadline`` inside ``cancellable()`` with ``Cancelled``."""
    _cancelled[0].set()


@contextmanager
def cancellable() -> Iterator[None]:
    """While open, model calls on the sync path run in daemon threads and ``cancel()`` stops them."""
    with _scopes:
        if not _open[0] and _cancelled[0].is_set():  # a cancel outside any scope ends no later call
            _cancelled[0] = threading.Event()
        _open[0] += 1
    try:
        yield
    finally:
        with _scopes:
            _open[0] -= 1
            if not _open[0] and _cancelled[0].is_set():
                _cancelled[0] = threading.Event()


def call_with_deadline(fn: Callable[[], T], seconds: float | None, name: str = "reins-deadline") -> T:
    """Return ``fn()`` or raise its exception; raise ``DeadlineExceeded`` after ``seconds`` (None: no
    deadline), or ``Cancelled`` as soon as ``cancel()`` is called inside ``cancellable()``."""
    context = contextvars.copy_context()
    cancelled = _cancelled[0] if _open[0] else None  # the cancellation this call answers to
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
    end = None if seconds is None else time.monotonic() + seconds
    while True:
        timeout = None if end is None else max(0.0, end - time.monotonic())
        if cancelled is not None:  # look for a cancellation now and then
            timeout = _POLL_S if timeout is None else min(_POLL_S, timeout)
        if done.wait(timeout):
            break
        if cancelled is not None and cancelled.is_set():
            raise Cancelled()
        if end is not None and time.monotonic() >= end:
            raise DeadlineExceeded(seconds)  # type: ignore[arg-type]
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def call_cancellable(fn: Callable[[], T], name: str = "reins-call") -> T:
    """``fn()``; inside ``cancellable()`` in a daemon thread whose wait ``cancel()`` ends."""
    return call_with_deadline(fn, None, name) if _open[0] else fn()
