"""Delivery-chain state: plain JSON-like data only (checkpoints are deserialised strictly).

``DeliveryInput`` and ``DeliveryOutput`` are the public contract; ``DeliveryState`` adds the run's
working data. Keys written by parallel reviewers, or appended across steps, carry reducers.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from runtime.contracts import merge_metrics

# Where the deciding nodes may send the run next (their ``Command`` destinations, so Studio draws them).
AfterPre = Literal["manager", "render_report", "fail_closed"]
AfterManager = Literal["plan_worker", "task_worker", "reviewer", "manager_refused", "fail_closed"]
AfterRefusal = Literal["manager", "fail_closed"]


class Failure(TypedDict):
    """Why the run failed closed: a static, safe reason (and the redacted cause class of an error)."""

    stage: str
    code: str
    message: str
    cause: NotRequired[str]


class PolicyViolation(TypedDict):
    """The rule a policy found broken (``policies.delegation.Violation`` as data)."""

    code: str
    message: str


class DelegationVerdict(TypedDict):
    """The delegation policy's verdict on the manager's latest turn, recorded by the manager itself:
    where the run goes next and, for a refused turn, the rule it broke."""

    next: AfterManager
    violation: PolicyViolation | None


class DeliveryInput(TypedDict, total=False):
    """A requirement to deliver: its text, or a reference to a bundled one."""

    requirement: Annotated[str, Field(description="The requirement as text.")]
    requirement_uri: Annotated[str, Field(description="Or a reference, e.g. demo://scenarios/<id>/requirement.md.")]


class DeliveryOutput(TypedDict, total=False):
    run_status: str
    report: str
    artifacts: dict[str, Any]
    review_bundle: dict[str, Any] | None
    post_review_decision: dict[str, Any] | None
    revision: dict[str, Any]
    policy_violation: PolicyViolation | None  # the rule that stopped the run, when one did
    failure: Failure | None  # why the run failed, when it did
    metrics: dict[str, Any]
    trace: Annotated[list[dict[str, str]], operator.add]


class DeliveryState(DeliveryInput, DeliveryOutput, total=False):
    run_id: str
    started_at: float
    source_label: str
    requirement_text: str  # already redacted: no secret ever reaches a model
    context_blocks: list[dict[str, str]]
    warnings: Annotated[list[str], operator.add]
    governance: dict[str, Any]  # which governance and rubric documents the run used: {set, custom, bundled}
    pre_decision: dict[str, Any] | None
    pending_calls: list[dict[str, Any]]  # the manager's latest turn, as proposed
    delegation: DelegationVerdict  # the policy's verdict on that turn
    manager_turns: int
    manager_refusals: Annotated[list[dict[str, Any]], operator.add]  # {turn, executed, code, reasked}
    delegated: Annotated[list[str], operator.add]  # sub-agent tools executed, in order
    plan: dict[str, Any] | None  # {artifact_id, revision, value, result}
    tasks: dict[str, Any] | None
    review_outcomes: Annotated[list[dict[str, Any]], operator.add]  # the reviewers' join
    revision_outcomes: Annotated[list[dict[str, Any]], operator.add]
    contract_metrics: Annotated[dict[str, dict[str, int]], merge_metrics]


class ReviewerTask(TypedDict):
    """What one reviewer receives through ``Send``: the same plan/tasks snapshot as its peers."""

    role: str
    tool: str
    run_id: str
    requirement_text: str
    context_blocks: list[dict[str, str]]
    plan: dict[str, Any]
    tasks: dict[str, Any]
    focus: str
    note: str
