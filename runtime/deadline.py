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
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """The call did not finish within its deadline."""

    def __init__(self, seconds: float):
        super().__init__(f"no result within {seconds:g} s")
        self.seconds = seconds


def call_with_deadline(fn: Callable[[], T], seconds: float, name: str = "reins-deadline") -> T:
    """Return ``fn()`` or raise its exception; raise ``DeadlineExceeded`` after ``seconds``."""
    context = contextvars.copy_context()
    done = threading.Event()
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = context.run(fn)
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
