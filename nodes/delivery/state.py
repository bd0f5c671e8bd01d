"""Delivery-chain state: plain JSON-like data only (checkpoints are deserialised strictly).

``DeliveryInput`` and ``DeliveryOutput`` are the public contract; ``DeliveryState`` adds the run's
working data. Keys written by parallel reviewers, or appended across steps, carry reducers.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from runtime.contracts import merge_metrics


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
    policy_violation: dict[str, str] | None
    failure: dict[str, str] | None  # {stage, code, message, cause?}: why the run failed, when it did
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
    pending_calls: list[dict[str, Any]]  # the manager's latest turn, checked by the policy edge
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
