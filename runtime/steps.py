"""Two things every node does: attempt a model request, and record the step it ran.

``attempt`` turns a request into its outcome — the value, or the failure with its code — so a node
chooses its fallback with an ``if`` rather than an ``except`` block; the metrics the call spent come
with either::

    outcome = yield from attempt(Contract("assistant.answer", AssistantAnswer, messages, models))
    if not outcome.ok:
        return {"failure": outcome.code, "metrics": outcome.metrics}

``recorded_step`` is a progress step whose summary is also the step's trace record, so the progress
event and the trace say the same thing, redacted and cut alike::

    with recorded_step(progress, "answer", "Write the answer") as step:
        ...
        step.summary = "drafted"
    return {"trace": [step.trace()]}
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph.errors import GraphBubbleUp

from policies.redaction import redact
from runtime.contracts import safe_error
from runtime.failures import (  # noqa: F401 - a failed attempt's codes, named here too
    CONTRACT_FAILURE,
    EXECUTION_FAILED,
    TIMEOUT,
    failure_code,
    failure_label,
)
from runtime.progress import SUMMARY_LIMIT, Progress, StepHandle
from schemas.trace import TraceRecord


def metrics_of(outcome: Any) -> dict[str, Any]:
    """The contract metrics a result or a failure carries (none for store writes and subgraphs)."""
    metrics = getattr(outcome, "metrics", None)
    return dict(metrics) if isinstance(metrics, Mapping) else {}


@dataclass(frozen=True)
class Attempt:
    """The outcome of one request: its value, or the failure that replaced it."""

    value: Any = None
    error: BaseException | None = None
    metrics: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def code(self) -> str:
        """``""`` when ok, else contract_failure | timeout | execution_failed."""
        return "" if self.error is None else failure_code(self.error)

    def reason(self, limit: int = 160) -> str:
        """The failure as a trace or a user may read it: redacted and bounded (``""`` when ok)."""
        return "" if self.error is None else safe_error(self.error, limit)


def attempt(request: Any) -> Generator[Any, Any, Attempt]:
    """Inside a node generator: ``outcome = yield from attempt(Contract(...))``.

    An ordinary failure becomes the outcome. Cancellation and interrupts (a review pause, a
    ``Command`` for the parent graph) are not failures of the request and propagate.
    """
    try:
        value = yield request
    except GraphBubbleUp:
        raise
    except Exception as error:
        return Attempt(error=error, metrics=metrics_of(error))
    return Attempt(value=value, metrics=metrics_of(value))


def trace_record(step: str, summary: str, *, limit: int = SUMMARY_LIMIT, **flags: Any) -> TraceRecord:
    """A trace record: the summary redacted and cut to ``limit``; flags that are ``None`` left out."""
    record: dict[str, Any] = {"step": step, "summary": redact(summary, limit)}
    record.update({key: value for key, value in flags.items() if value is not None})
    return record  # type: ignore[return-value]  # keys checked by TraceRecord's readers


@dataclass
class RecordedStep(StepHandle):
    """A progress step that is also a trace record: set ``status`` and ``summary`` as on a
    ``StepHandle``; ``trace()`` is the record with the summary the completing event shows."""

    step_id: str = ""
    flags: dict[str, Any] = field(default_factory=dict)

    def trace(self, **flags: Any) -> TraceRecord:
        """This step's trace record; ``flags`` add to (or override) those given when it started."""
        return trace_record(self.step_id, self.summary, **{**self.flags, **flags})


@contextmanager
def recorded_step(progress: Progress, step_id: str, title: str, **flags: Any) -> Iterator[RecordedStep]:
    """``Progress.step`` (running, then completed or the status set; failed on an error) whose
    summary is also the step's trace record."""
    step = RecordedStep(step_id=step_id, flags=flags)
    with progress.step(step_id, title, step):
        yield step
