"""The tasklist agent's state, input and output.

State holds plain JSON-like data only (pydantic outputs are dumped, policy results stored with
``as_dict``) so checkpoints deserialise strictly; the records below name their shapes.
``trace`` and ``manual_review_items`` accumulate; ``contract_metrics`` adds up per contract.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import Field

# typing_extensions: pydantic builds the graph's JSON schemas from these on Python 3.11, which
# needs its TypedDict (and NotRequired with it).
from typing_extensions import NotRequired, TypedDict

from reins.runtime.execution.steps import ContractMetrics
from reins.schemas.trace import TraceRecord


class TasklistInput(TypedDict, total=False):
    """A version plan to turn into a task list: the whole request, or the plan reference alone."""

    request: Annotated[str, Field(description="/tasklist docs://versions/<plan>.md, optionally with a goal.")]
    plan_uri: Annotated[str, Field(description="The plan reference alone, e.g. docs://versions/v0.2.0-ready.md.")]


class TasklistOutput(TypedDict, total=False):
    """The public contract of a run's result."""

    run_id: str
    status: str  # the state machine's status
    final_decision: str | None  # final | final_with_manual_review_items | blocked | stopped | failed
    decision: Decision | None  # the validated planning decision
    strategy: Strategy | None
    artifact: Artifact | None
    validation: dict[str, Validation]  # per version: {"v1": {...}, "v2": {...}}
    warning_disposition: WarningDisposition | None
    revision_effect: RevisionEffect | None
    manual_review_items: Annotated[list[ManualReviewItem], operator.add]
    trace: Annotated[list[TraceRecord], operator.add]  # safe step summaries
    summary: str
    message: str | None  # the question / boundary message when stopped
    contract_metrics: ContractMetrics


class TasklistState(TasklistInput, TasklistOutput, total=False):
    graph_version: str
    human_review: bool
    limits: Limits
    counters: Counters
    stop_kind: str
    user_goal: str
    plan_text: str
    plan: PlanExtraction
    readiness: Readiness
    allowed_actions: list[str]
    context_doc: ContextDoc | None
    strategy_review: StrategyReview
    drafts: dict[str, str]  # markdown per version: {"v1": …, "v2": …}
    revision_review: RevisionReview
    # Every question the machine's guard answered, as it saw it: what a replay re-decides.
    guard_log: Annotated[list[GuardRecord], operator.add]


# The records the state holds (forward references above resolve when the graph is built).


class GuardRecord(TypedDict):
    """One guard question and answer (``reins.policies.audit.tasklist_replay.guard_record``)."""

    machine: dict[str, Any]  # the Machine the guard saw, as plain data
    action: str
    resource_uri: str | None
    choice: str | None
    verdict: str  # "allowed → <status>" | "refused (<code>)"


class ManualReviewItem(TypedDict):
    """Something a person should look at before adopting the task list."""

    title: str
    detail: str
    severity: str  # info | warning


class PlanningAction(TypedDict):
    """The planning decision's chosen action (``reins.schemas.tasklist.PlanningAction`` as data)."""

    type: str  # one of schemas.tasklist.PLANNING_ACTIONS
    reason: str
    resource_uri: NotRequired[str]  # read_optional_context
    question: NotRequired[str]  # ask_clarification
    message: NotRequired[str]  # stop_with_boundary_message
    review_items: NotRequired[list[ManualReviewItem]]  # proceed_with_manual_review_items


class Strategy(TypedDict):
    """The split strategy (``reins.schemas.tasklist.TasklistStrategy`` as data)."""

    granularity: str  # coarse | medium | detailed
    expected_step_range: list[int]  # [low, high]
    grouping: list[str]
    priority: list[str]
    reason: str


class Decision(TypedDict):
    """The validated, redacted planning decision; a proceed decision carries its strategy."""

    decision: PlanningAction
    strategy: Strategy | None


class StrategyReview(TypedDict):
    approved: bool
    feedback: str | None  # the reviewer's response, until a regenerated strategy answers it


class ReviewDecision(TypedDict):
    """A person's answer to a review pause, as the review policy accepted it."""

    type: str  # approve | edit | reject | respond (strategy review only)
    strategy: NotRequired[Strategy]  # edit, at the strategy review
    markdown: NotRequired[str]  # edit, at the revision review
    reason: NotRequired[str | None]  # reject
    feedback: NotRequired[str]  # respond


class ReviewSubject(TypedDict):
    """What a review pause puts before a person."""

    question: str
    plan_uri: str
    target_version: NotRequired[str]  # strategy review
    strategy: NotRequired[Strategy]  # strategy review
    fix_now: NotRequired[list[str]]  # revision review
    draft: NotRequired[str]  # revision review


class ReviewRequest(ReviewSubject):
    """A review pause's interrupt payload: the subject and the decisions allowed now."""

    kind: str  # strategy_review | revision_review
    run_id: str
    allowed_decisions: list[str]
    decisions: dict[str, Any]  # per allowed decision: what it does, its JSON schema and an example
    error: str | None  # why the previous answer was refused


class RevisionReview(TypedDict):
    approved: bool
    edited: bool  # the reviewer wrote v2 themselves


class ArtifactMetadata(TypedDict):
    plan_uri: str
    target_version: str
    revision: int  # 1 or 2
    validated: bool


class Artifact(TypedDict):
    """The task list a run produces."""

    markdown: str
    metadata: ArtifactMetadata


class WeakFinding(TypedDict):
    id: str
    code: str
    auto_fixable: bool


class Validation(TypedDict):
    """One draft's structural validation (``reins.policies.tasklist.structure.StructureValidation``)."""

    status: str  # pass | warning | fail
    score: int
    step_count: int
    blocking: list[str]
    weak: list[WeakFinding]
    issue_ids: list[str]


class WarningDisposition(TypedDict):
    fix_now: list[str]  # issue ids the one revision must fix
    manual_review_items: list[ManualReviewItem]
    reason: str


class RevisionEffect(TypedDict):
    fixed_issues: list[str]
    remaining_issues: list[str]
    improved: bool
    score_before: int
    score_after: int
    final_decision: str
    unresolved_fix_now: list[str]


class Counters(TypedDict):
    """What the run has spent (``reins.policies.tasklist.machine.Counters``)."""

    steps: int
    optional_context_reads: int
    draft_revisions: int
    strategy_regenerations: int


class Limits(TypedDict):
    """What the run may spend (``reins.policies.tasklist.machine.Limits``)."""

    max_steps: int
    max_optional_context_reads: int
    max_draft_revisions: int
    max_strategy_regenerations: int


class PlanExtraction(TypedDict):
    """The version plan as read (``reins.policies.tasklist.plan.PlanExtraction``)."""

    title: str
    target_version: str
    sections: dict[str, list[str]]
    other_headings: list[str]


class Readiness(TypedDict):
    status: str  # ready | needs_review | blocked
    missing_fields: list[str]
    weak_fields: list[str]
    reason: str


class ContextDoc(TypedDict):
    """The one optional context read: what was read, whether it could be, and the text for prompts."""

    uri: str
    ok: bool
    text: NotRequired[str]
