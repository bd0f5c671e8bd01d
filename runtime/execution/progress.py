"""Progress events: LangGraph custom stream events that say what a run is doing, never what it wrote.

Each event: ``{"type": "workflow-progress", "workflow", "run_id", "step", "status", "title",
"summary", "duration_ms"}`` with status running | completed | failed | skipped, plus a ``start`` and
an ``end`` event per run. Summaries are redacted and cut to 200 characters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from reins.policies.text.redaction import redact

EVENT_TYPE = "workflow-progress"
SUMMARY_LIMIT = 200
STATUSES = ("running", "completed", "failed", "skipped")


def _writer() -> Callable[[Any], None]:
    try:
        from langgraph.config import get_stream_writer

        return get_stream_writer()
    except RuntimeError:  # outside a graph run: nobody is listening
        return lambda _event: None


@dataclass
class StepHandle:
    summary: str = ""
    status: str = "completed"

    def fail(self, summary: str) -> None:
        """The step failed; ``summary`` says how (its completing event and trace record show it)."""
        self.status, self.summary = "failed", summary

    def skip(self, summary: str) -> None:
        """The step did not run; ``summary`` says why."""
        self.status, self.summary = "skipped", summary


@dataclass
class Progress:
    workflow: str
    run_id: str
    emit: Callable[[Any], None] = field(default_factory=_writer)

    def event(self, step: str, status: str, title: str, summary: str = "", duration_ms: int = 0) -> dict:
        if status not in STATUSES:
            raise ValueError(f"unknown progress status {status!r}")
        payload = {
            "type": EVENT_TYPE,
            "workflow": self.workflow,
            "run_id": self.run_id,
            "step": step,
            "status": status,
            "title": title,
            "summary": redact(summary, SUMMARY_LIMIT),
            "duration_ms": int(duration_ms),
        }
        self.emit(payload)
        return payload

    def start(self, title: str) -> None:
        self.event("start", "running", title)

    def end(self, status: str, summary: str) -> None:
        self.event("end", "failed" if status == "failed" else "completed", "Run finished", summary)

    def skipped(self, step: str, title: str, summary: str = "") -> None:
        self.event(step, "skipped", title, summary)

    @contextmanager
    def step(self, step: str, title: str, handle: StepHandle | None = None) -> Iterator[StepHandle]:
        """Emit running, then completed (or the handle's status) with the duration; failed on error.
        ``handle``: one the caller made (a ``StepHandle`` subclass that also keeps the trace)."""
        handle = StepHandle() if handle is None else handle
        started = time.perf_counter()
        self.event(step, "running", title)
        try:
            yield handle
        except BaseException as error:
            from langgraph.errors import GraphInterrupt

            if isinstance(error, GraphInterrupt):  # a pause for a human is not a failure
                raise
            elapsed = int((time.perf_counter() - started) * 1000)
            self.event(step, "failed", title, handle.summary or type(error).__name__, elapsed)
            raise
        elapsed = int((time.perf_counter() - started) * 1000)
        self.event(step, handle.status, title, handle.summary, elapsed)
