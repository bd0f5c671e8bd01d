"""Two things every node does: attempt a model request, and record the step it ran.

``attempt`` turns a request into its outcome — the value, or the failure with its code — so a node
chooses its fallback with an ``if`` rather than an ``except`` block. The value comes unwrapped (a
contract's validated model, a text call's text, a tool turn's message), and the metrics every
request spent are merged into the node's update by the runtime (``metered``, applied by
``reins.runtime.execution.calls.node``) under ``METRICS_KEY`` — the same key and shape in every graph — so a node
never copies them::

    outcome = yield from attempt(Contract("assistant.answer", AssistantAnswer, messages, models))
    if not outcome.ok:
        return {"failure": outcome.code}
    draft = outcome.value  # an AssistantAnswer

``recorded_step`` is a progress step whose summary is also the step's trace record, so the progress
event and the trace say the same thing, redacted and cut alike::

    with recorded_step(progress, "answer", "Write the answer") as step:
        ...
        step.summary = "drafted"  # or step.fail("…") / step.skip("…")
    return {"trace": [step.trace()]}
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from langgraph.errors import GraphBubbleUp
from langgraph.types import Command, Overwrite

from reins.policies.text.redaction import redact
from reins.runtime.contracts import Contracted, TextResult, ToolTurn
from reins.runtime.llm.failures import safe_error
from reins.runtime.llm.failures import (  # noqa: F401 - a failed attempt's codes, named here too
    CONTRACT_FAILURE,
    EXECUTION_FAILED,
    TIMEOUT,
    failure_code,
    failure_label,
)
from reins.runtime.llm.model_calls import merge_metrics
from reins.runtime.execution.progress import SUMMARY_LIMIT, Progress, StepHandle
from reins.schemas.trace import TraceRecord

# Where every graph keeps what its model calls spent: per contract, the ``METRIC_FIELDS`` counters,
# added up by the reducer. A graph's state declares ``contract_metrics: ContractMetrics``.
METRICS_KEY = "contract_metrics"
ContractMetrics = Annotated[dict[str, dict[str, int]], merge_metrics]


def metrics_of(outcome: Any) -> dict[str, Any]:
    """The contract metrics a result or a failure carries (none for store writes and subgraphs)."""
    metrics = getattr(outcome, "metrics", None)
    return dict(metrics) if isinstance(metrics, Mapping) else {}


def unwrapped(result: Any) -> Any:
    """What a request's result carries: a contract's validated value, a text call's text, a tool
    turn's message; any other result (a subgraph's output, store items) as it is."""
    if isinstance(result, Contracted):
        return result.value
    if isinstance(result, TextResult):
        return result.text
    if isinstance(result, ToolTurn):
        return result.message
    return result


@dataclass(frozen=True)
class Attempt:
    """The outcome of one request: its unwrapped value, or the failure that replaced it. ``metrics``
    is what it spent, already merged into the node's update by ``metered``."""

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
    return Attempt(value=unwrapped(value), metrics=metrics_of(value))


def metered(steps: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """A node's generator whose update also holds, under ``METRICS_KEY``, what every request it made
    spent — answered or failed, the failure handled by the node or not."""
    spent: dict[str, dict[str, int]] = {}
    try:
        request = next(steps)
        while True:
            try:
                result = yield request
            except BaseException as error:  # passed on to the node at its yield
                spent = merge_metrics(spent, metrics_of(error))
                request = steps.throw(error)
            else:
                spent = merge_metrics(spent, metrics_of(result))
                request = steps.send(result)
    except StopIteration as done:
        return with_metrics(done.value, spent)


def with_metrics(update: Any, spent: Mapping[str, Mapping[str, int]]) -> Any:
    """``update`` (a mapping or a ``Command``) with ``spent`` added to its metrics; an ``Overwrite``
    there (a new turn resetting them) stays one, holding ``spent``."""
    if not spent:
        return update
    if isinstance(update, Command):
        return replace(update, update=with_metrics(update.update or {}, spent))
    if update is None:
        update = {}
    if not isinstance(update, Mapping):
        raise TypeError(f"a node that calls a model returns a mapping or a Command, not {type(update).__name__}")
    current = update.get(METRICS_KEY)
    if isinstance(current, Overwrite):
        merged: Any = Overwrite(merge_metrics(current.value, spent))
    else:
        merged = merge_metrics(current, spent)
    return {**update, METRICS_KEY: merged}


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
