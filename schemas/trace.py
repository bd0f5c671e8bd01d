"""The trace record: one step of a run as its trace shows it, the same shape in every graph.

A trace says what a run did, never what it wrote: summaries are redacted and bounded when the
record is made (``reins.runtime.execution.steps``), and a record is plain data so checkpoints stay msgpack-safe.
"""

from __future__ import annotations

# typing_extensions: pydantic builds the graphs' JSON schemas from these on Python 3.11, which
# needs its TypedDict (and NotRequired with it).
from typing_extensions import NotRequired, TypedDict


class TraceRecord(TypedDict):
    step: str  # the step's id, as its progress events name it
    summary: str  # safe: redacted and bounded
    violation: NotRequired[bool]  # the step stopped an action a rule forbids
    plan_step: NotRequired[int]  # the plan step a tool call served
    recovered_from_text: NotRequired[bool]  # the model wrote its tool calls as text; they were read from it
    # A tool call's record: which tool, a digest of its arguments (never the arguments), when it
    # started (epoch seconds), how long it took and how it ended.
    tool: NotRequired[str]
    args_digest: NotRequired[str]
    started_at: NotRequired[float]
    duration_ms: NotRequired[int]
    outcome: NotRequired[str]
