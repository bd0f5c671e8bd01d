"""Delivery-chain state: plain JSON-like data only (checkpoints are deserialised strictly).

``DeliveryInput`` and ``DeliveryOutput`` are the public contract; ``DeliveryState`` adds the run's
working data. Keys written by parallel reviewers, or appended across steps, carry reducers.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from reins.runtime.execution.steps import ContractMetrics
from reins.schemas.delivery import PreBranch, ReviewerOutcome, RunStatus
from reins.schemas.trace import TraceRecord

# Where the deciding nodes may send the run next (their ``Command`` destinations, so Studio draws them).
AfterLoad = Literal["supervisor_pre", "fail_closed"]
AfterPre = Literal["manager", "render_report", "fail_closed"]
AfterManager = Literal["plan_worker", "task_worker", "reviewer", "manager_refused", "fail_closed"]
AfterRefusal = Literal["manager", "fail_closed"]
AfterWorker = Literal["manager", "fail_closed"]
AfterSynthesis = Literal["supervisor_post", "render_report"]
AfterPost = Literal["revise_plan", "revise_tasks", "render_report"]
AfterPlanRevision = Literal["revise_tasks", "render_report"]


class Failure(TypedDict):
    """Why the run failed closed: a static, safe reason (and the redacted cause class of an error)."""

    stage: str
    code: str
    message: str
    cause: NotRequired[str]


class PolicyViolation(TypedDict):
    """The rule a policy refused by (a refused ``reins.policies.verdict.Verdict`` as data: its code and reason)."""

    code: str
    message: str


class DelegationVerdict(TypedDict):
    """The delegation policy's verdict on the manager's latest turn, recorded by the manager itself:
    where the run goes next and, for a refused turn, the rule it broke."""

    next: AfterManager
    violation: PolicyViolation | None


class PreDecision(TypedDict):
    """The supervisor's validated pre-decision as data (``SupervisorPreDecision``; unset fields absent)."""

    branch: PreBranch
    assumptions: NotRequired[list[str]]
    planning_focus: NotRequired[str]
    task_focus: NotRequired[str]
    review_focus: NotRequired[dict[str, str]]  # per reviewer role
    reviewer_roles: NotRequired[list[str]]
    stage_intents: NotRequired[list[dict[str, str]]]  # {stage, objective}
    missing_information: NotRequired[list[str]]
    boundary_evidence: NotRequired[list[str]]
    next_step: NotRequired[str]
    reason: NotRequired[str]


class ContextBlock(TypedDict):
    """A document the prompts may cite: the scenario's context, a governance or rubric document."""

    kind: str
    title: str
    markdown: str


class Governance(TypedDict):
    """Which governance and rubric documents the run used."""

    set: Literal["custom", "bundled"]
    custom: list[str]  # titles read from the custom root
    bundled: list[str]


class ProposedToolCall(TypedDict):
    """One call of the manager's turn, as the model proposed it (never executed as such)."""

    id: str
    name: str
    args: dict[str, Any]  # checked by the policy: ``{note?}`` and nothing else


class ManagerProposal(TypedDict):
    """One manager turn as the policy saw it — what had run, which artifacts existed, what the model
    proposed — and the verdict: what a replay re-decides under another policy (``reins.nodes.delivery.replay``)."""

    turn: int
    executed: list[str]  # sub-agent tools executed before this turn, in order
    artifacts: list[str]  # work artifacts present before this turn
    calls: list[ProposedToolCall]
    cut_off: bool
    verdict: DelegationVerdict


class ManagerRefusal(TypedDict):
    turn: int  # the manager turn refused
    executed: int  # sub-agents run before it: identifies the turn across its re-asks
    code: str  # the violated rule
    reasked: bool
    issues: NotRequired[list[dict[str, str]]]  # the reason as {path, code} pairs, told to the re-ask
    escalated: NotRequired[bool]  # the turn goes once to the manager's escalation model (nodes.delivery.escalation)


class ToolResultView(TypedDict):
    """A sub-agent's result in the strict tool-result shape (``SubagentToolResult`` as data)."""

    status: str
    markdown: str
    summary_for_manager: str  # all the manager ever sees of an artifact
    warnings: list[str]
    artifact_title: NotRequired[str]


class ArtifactRecord(TypedDict):
    """The plan or the task breakdown: the id a revision keeps, its revision, and its content."""

    artifact_id: str
    revision: int
    value: dict[str, Any]  # the validated, redacted ``DeliveryPlan`` / ``DeliveryTasks`` as JSON
    result: ToolResultView


class ReviewFailure(TypedDict):
    code: str  # contract_failure | timeout | execution_failed
    cause: str
    issues: NotRequired[list[str]]  # the contract's issue codes, for a contract failure


class ReviewOutcome(TypedDict):
    """What one reviewer returned: its review, or why there is none."""

    role: str
    tool: str
    outcome: ReviewerOutcome
    review: dict[str, Any] | None  # the validated, redacted review as JSON
    failure: ReviewFailure | None
    elapsed_ms: int


class RevisionOutcome(TypedDict):
    """The one revision of an artifact: linked to the findings that asked for it, never claiming
    they are resolved."""

    request_key: str
    target: str  # plan | tasks
    artifact_id: str
    from_revision: int
    to_revision: int
    source_finding_ids: list[str]
    resolved_claimed: bool
    status: str  # revised | failed
    failure_code: NotRequired[str]
    failure_cause: NotRequired[str]


class Tokens(TypedDict):
    input: int
    output: int


class RunBudget(TypedDict):
    """What a run used (model requests, output tokens, tool calls, seconds) beside its worst case."""

    used: dict[str, float]
    worst_case: dict[str, float]
    line: str


class RunMetrics(TypedDict):
    """What the run spent: model calls per contract and role, refusals, retries, tokens, time."""

    calls: dict[str, int]  # per contract: business + encoder + repair calls
    calls_per_role: dict[str, int]
    manager_refusals: int
    manager_reasks: int
    business_calls: int
    encoder_calls: int
    repair_calls: int
    retries: int
    fallbacks_per_role: dict[str, int]  # calls moved to a role's fallback model
    escalations: int  # requests sent once more to a role's escalation model (manager turns and contracts)
    models: dict[str, list[str]]  # per role: the models that answered its calls
    failed_calls: int  # calls that got no answer after their retries
    tokens: Tokens
    elapsed_ms: int
    per_contract: dict[str, dict[str, int]]
    budget: NotRequired[RunBudget]


class RevisionSummary(TypedDict):
    requests: list[dict[str, Any]]  # the revision requests derived from findings (``reins.policies.delivery.revision``)
    outcomes: list[RevisionOutcome]


class DeliveryInput(TypedDict, total=False):
    """A requirement to deliver: its text, or a reference to a bundled one."""

    requirement: Annotated[str, Field(description="The requirement as text.")]
    requirement_uri: Annotated[str, Field(description="Or a reference, e.g. demo://scenarios/<id>/requirement.md.")]


class DeliveryOutput(TypedDict, total=False):
    run_status: RunStatus
    report: str
    artifacts: dict[str, Any]
    review_bundle: dict[str, Any] | None
    post_review_decision: dict[str, Any] | None
    revision: RevisionSummary
    policy_violation: PolicyViolation | None  # the rule that stopped the run, when one did
    failure: Failure | None  # why the run failed, when it did
    metrics: RunMetrics
    trace: Annotated[list[TraceRecord], operator.add]


class DeliveryState(DeliveryInput, DeliveryOutput, total=False):
    run_id: str
    started_at: float
    source_label: str
    requirement_text: str  # already redacted: no secret ever reaches a model
    context_blocks: list[ContextBlock]
    warnings: Annotated[list[str], operator.add]
    governance: Governance
    pre_decision: PreDecision | None
    pending_calls: list[ProposedToolCall]  # the manager's latest turn, as proposed
    delegation: DelegationVerdict  # the policy's verdict on that turn
    manager_turns: int
    manager_refusals: Annotated[list[ManagerRefusal], operator.add]
    manager_proposals: Annotated[list[ManagerProposal], operator.add]
    delegated: Annotated[list[str], operator.add]  # sub-agent tools executed, in order
    plan: ArtifactRecord | None
    tasks: ArtifactRecord | None
    review_outcomes: Annotated[list[ReviewOutcome], operator.add]  # the reviewers' join
    revision_outcomes: Annotated[list[RevisionOutcome], operator.add]
    contract_metrics: ContractMetrics


class ReviewerTask(TypedDict):
    """What one reviewer receives through ``Send``: the same plan/tasks snapshot as its peers."""

    role: str
    tool: str
    run_id: str
    requirement_text: str
    context_blocks: list[ContextBlock]
    plan: dict[str, Any]  # the artifacts' content without their markdown
    tasks: dict[str, Any]
    focus: str
    note: str
