"""Tasklist-agent contracts: the only shapes that cross a model or human boundary.

Strict objects (unknown fields and type coercion rejected), trimmed and bounded strings, bounded
lists. Cross-field rules live here so nothing downstream reads an output that broke them:
``strategy`` is required for both ``proceed_*`` decisions and forbidden for the other three, and a
strategy's step range is ordered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from operator import or_
from typing import Annotated, Any, Literal, get_args

from pydantic import ConfigDict, Field, TypeAdapter, model_validator

from reins.schemas.rules import Broken, raise_broken
from reins.schemas.strict import Strict
from reins.schemas.strict import bounded_text as _text


Reason = _text(500)
MARKDOWN_LIMIT = 100_000  # validate_tasklist_structure accepts drafts of 1..100,000 chars

PROCEED_ACTIONS: frozenset[str] = frozenset({"proceed_to_tasklist_strategy", "proceed_with_manual_review_items"})


class ManualReviewItem(Strict):
    title: _text(80)
    detail: _text(500)
    severity: Literal["info", "warning"]


# ------------------------------------------------------------------------------- planning decision


class ProceedToTasklistStrategy(Strict):
    type: Literal["proceed_to_tasklist_strategy"]
    reason: Reason


class ReadOptionalContext(Strict):
    type: Literal["read_optional_context"]
    # Any bounded URI passes the schema; whether it may be read is the state-machine guard's call.
    resource_uri: _text(300)
    reason: Reason


class AskClarification(Strict):
    type: Literal["ask_clarification"]
    question: _text(300)
    reason: Reason


class ProceedWithManualReviewItems(Strict):
    type: Literal["proceed_with_manual_review_items"]
    review_items: Annotated[list[ManualReviewItem], Field(min_length=1, max_length=5)]
    reason: Reason


class StopWithBoundaryMessage(Strict):
    type: Literal["stop_with_boundary_message"]
    message: _text(800)
    reason: Reason


PlanningAction = Annotated[
    ProceedToTasklistStrategy
    | ReadOptionalContext
    | AskClarification
    | ProceedWithManualReviewItems
    | StopWithBoundaryMessage,
    Field(discriminator="type"),
]
# The actions, in the union's order: each member's ``type`` Literal names one.
PLANNING_ACTIONS: tuple[str, ...] = tuple(
    get_args(action.model_fields["type"].annotation)[0] for action in get_args(get_args(PlanningAction)[0])
)


class TasklistStrategy(Strict):
    granularity: Literal["coarse", "medium", "detailed"]
    expected_step_range: Annotated[list[int], Field(min_length=2, max_length=2)]
    grouping: Annotated[list[_text(120)], Field(min_length=1, max_length=8)]
    priority: Annotated[list[_text(120)], Field(min_length=1, max_length=8)]
    reason: Reason

    @model_validator(mode="after")
    def _range_is_ordered(self) -> TasklistStrategy:
        low, high = self.expected_step_range
        broken = []
        if not 1 <= low <= 20:
            broken.append(Broken(("expected_step_range", 0), "out_of_range", "the minimum must be between 1 and 20"))
        if not 1 <= high <= 30:
            broken.append(Broken(("expected_step_range", 1), "out_of_range", "the maximum must be between 1 and 30"))
        if not broken and low > high:
            broken.append(Broken(("expected_step_range",), "min_above_max", "the range is [min, max] with min <= max"))
        raise_broken(type(self).__name__, broken)
        return self


class PlanningDecision(Strict):
    decision: PlanningAction
    strategy: TasklistStrategy | None = None

    @model_validator(mode="after")
    def _strategy_matches_action(self) -> PlanningDecision:
        proceeds = self.decision.type in PROCEED_ACTIONS
        if proceeds and self.strategy is None:
            raise_broken(type(self).__name__, [
                Broken(("strategy",), f"required_for_{self.decision.type}", "this decision must carry a strategy")])
        if not proceeds and self.strategy is not None:
            raise_broken(type(self).__name__, [
                Broken(("strategy",), f"forbidden_for_{self.decision.type}", "this decision must not carry a strategy")])
        return self


# ---------------------------------------------------------------------------------- human review

def _example(value: dict[str, Any]) -> ConfigDict:
    """A decision's JSON schema carries one valid example (a test validates every one)."""
    return ConfigDict(json_schema_extra={"examples": [value]})


EXAMPLE_STRATEGY: dict[str, Any] = {
    "granularity": "medium",
    "expected_step_range": [2, 4],
    "grouping": ["Interfaces", "Implementation", "Verification"],
    "priority": ["Interfaces first"],
    "reason": "Three groups of work with a clear order.",
}


class ApproveDecision(Strict):
    """Accept what is shown and continue."""

    model_config = _example({"type": "approve"})
    type: Literal["approve"]


class EditStrategyDecision(Strict):
    """Replace the split strategy with your own; the draft is written from it."""

    model_config = _example({"type": "edit", "strategy": EXAMPLE_STRATEGY})
    type: Literal["edit"]
    strategy: TasklistStrategy


class RejectDecision(Strict):
    """Stop the run without a task list; the reason is shown to the requester."""

    model_config = _example({"type": "reject", "reason": "The split does not match the release plan."})
    type: Literal["reject"]
    reason: Reason


class RespondDecision(Strict):
    """Ask for one regenerated strategy that takes your feedback into account (offered once)."""

    model_config = _example({"type": "respond", "feedback": "Fewer, larger steps; tests in every step."})
    type: Literal["respond"]
    feedback: _text(2000)


class EditMarkdownDecision(Strict):
    """Replace the draft with your own task list; it is validated as the one revision."""

    model_config = _example(
        {"type": "edit", "markdown": "# v0.2.0 Tasklist\n\n## Goals\n- ...\n\n## Steps\n\n### Step 1: ...\n- [ ] ..."}
    )
    type: Literal["edit"]
    markdown: _text(MARKDOWN_LIMIT)


class RejectRevisionDecision(Strict):
    """Stop the run instead of revising the draft; a reason is optional."""

    model_config = _example({"type": "reject", "reason": "I will rewrite this task list by hand."})
    type: Literal["reject"]
    reason: Reason | None = None


_REVIEW_SHAPES: dict[str, dict[str, type[Strict]]] = {
    "strategy_review": {
        "approve": ApproveDecision,
        "edit": EditStrategyDecision,
        "reject": RejectDecision,
        "respond": RespondDecision,
    },
    "revision_review": {
        "approve": ApproveDecision,
        "edit": EditMarkdownDecision,
        "reject": RejectRevisionDecision,
    },
}
REVIEW_KINDS: tuple[str, ...] = tuple(_REVIEW_SHAPES)
STRATEGY_REVIEW_DECISIONS: tuple[str, ...] = tuple(_REVIEW_SHAPES["strategy_review"])
REVISION_REVIEW_DECISIONS: tuple[str, ...] = tuple(_REVIEW_SHAPES["revision_review"])


def review_decision_type(kind: str, allowed: Sequence[str]) -> Any:
    """The decision type a reviewer may answer with: a union of exactly the ``allowed`` shapes.

    The review policy validates a reviewer's answer against it; its JSON schema is the interrupt's
    ``response_schema`` so a client can render a form for exactly these decisions.
    """
    shapes = _REVIEW_SHAPES[kind]
    unknown = [name for name in allowed if name not in shapes]
    if unknown or not allowed:
        raise ValueError(f"unknown {kind} decisions: {unknown or 'none allowed'}")
    members = [shapes[name] for name in allowed]
    if len(members) == 1:
        return members[0]
    return Annotated[reduce(or_, members), Field(discriminator="type")]


def review_decision_adapter(kind: str, allowed: Sequence[str]) -> TypeAdapter[Any]:
    return TypeAdapter(review_decision_type(kind, allowed))


def review_response_schema(kind: str, allowed: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of any decision allowed now (what a client may resume with)."""
    return review_decision_adapter(kind, allowed).json_schema()


def review_decision_forms(
    kind: str, allowed: Sequence[str], examples: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """For each decision allowed now: what it does, its JSON schema and an example to start from.

    ``examples`` replaces the built-in example of a decision (e.g. an edit that starts from the
    strategy under review); the caller passes only values that validate.
    """
    review_decision_type(kind, allowed)  # unknown or empty decisions raise
    forms: dict[str, dict[str, Any]] = {}
    for name in allowed:
        shape = _REVIEW_SHAPES[kind][name]
        schema = shape.model_json_schema()
        example = dict((examples or {}).get(name) or shape.model_config["json_schema_extra"]["examples"][0])
        forms[name] = {"description": schema.get("description", ""), "schema": schema, "example": example}
    return forms
