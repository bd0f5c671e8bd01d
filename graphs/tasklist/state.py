"""The tasklist agent's state, input, output and per-run context.

State holds plain JSON-like data only (pydantic outputs are dumped) so checkpoints deserialise
strictly. ``trace`` and ``manual_review_items`` accumulate; ``metrics`` adds up per contract.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from runtime.context import ReinsContext
from runtime.contracts import merge_metrics


@dataclass(kw_only=True)
class TasklistContext(ReinsContext):
    human_review: bool = field(
        default=False,
        metadata={"description": "Pause for a person at the strategy review and before the automatic revision."},
    )


class TasklistInput(TypedDict, total=False):
    """A version plan to turn into a task list: the whole request, or the plan reference alone."""

    request: Annotated[str, Field(description="/tasklist docs://versions/<plan>.md, optionally with a goal.")]
    plan_uri: Annotated[str, Field(description="The plan reference alone, e.g. docs://versions/v0.2.0-ready.md.")]


class TasklistOutput(TypedDict, total=False):
    """The public contract of a run's result."""

    run_id: str
    status: str  # the state machine's status
    final_decision: str | None  # final | final_with_manual_review_items | blocked | stopped | failed
    decision: dict[str, Any] | None  # the validated planning decision
    strategy: dict[str, Any] | None
    artifact: dict[str, Any] | None  # {markdown, metadata: {plan_uri, target_version, revision, validated}}
    validation: dict[str, Any]  # per version: {"v1": {...}, "v2": {...}}
    warning_disposition: dict[str, Any] | None
    revision_effect: dict[str, Any] | None
    manual_review_items: Annotated[list[dict[str, str]], operator.add]
    trace: Annotated[list[dict[str, Any]], operator.add]  # safe step summaries
    summary: str
    message: str | None  # the question / boundary message when stopped
    metrics: Annotated[dict[str, dict[str, int]], merge_metrics]


class TasklistState(TasklistInput, TasklistOutput, total=False):
    graph_version: str
    human_review: bool
    limits: dict[str, int]
    counters: dict[str, int]
    stop_kind: str
    user_goal: str
    plan_text: str
    plan: dict[str, Any]
    readiness: dict[str, Any]
    allowed_actions: list[str]
    context_doc: dict[str, Any] | None
    strategy_review: dict[str, Any]
    drafts: dict[str, str]
    revision_review: dict[str, Any]
