"""The tasklist agent's human review pauses (strategy review, revision review).

A pause is a LangGraph interrupt whose payload tells a person (CLI, Python, Studio, an SDK client)
what is under review, which decisions are allowed now and, for each, what it does, its JSON schema
and an example; the interrupt's ``response_schema`` is the schema of any allowed decision.

An answer is checked by the review policy before the run consumes it. An invalid one is never an
error of the run: the node asks again with one clear, redacted ``error`` in the payload, so the
thread stays paused at the same review (LangGraph matches resume values to the interrupts of a
node in order, so earlier refused answers replay deterministically).
"""

from __future__ import annotations

from collections.abc import Mapping

from langgraph.types import interrupt

from reins.nodes.tasklist.common import stop
from reins.nodes.tasklist.state import ReviewDecision, ReviewRequest, ReviewSubject, TasklistState
from reins.nodes.tasklist.steps import StepRun
from reins.policies.tasklist.review import check_review_decision
from reins.schemas.tasklist import review_decision_forms, review_response_schema

REVIEW_REJECTED_MESSAGE = "The reviewer rejected the {what}; no task list was produced."


def review_request(
    state: TasklistState, kind: str, subject: ReviewSubject, options: tuple[str, ...],
    examples: Mapping[str, ReviewDecision] | None = None,
) -> ReviewRequest:
    """The interrupt payload: what is under review plus the allowed decisions, their schemas and examples."""
    return {
        "kind": kind,
        "run_id": state["run_id"],
        **subject,
        "allowed_decisions": list(options),
        "decisions": review_decision_forms(kind, options, examples),
        "error": None,
    }


def await_review(
    state: TasklistState, run: StepRun, kind: str, subject: ReviewSubject,
    options: tuple[str, ...], examples: Mapping[str, ReviewDecision] | None = None,
) -> ReviewDecision:
    """Pause for a person until they give a valid decision; return it (the step's summary says which)."""
    request = review_request(state, kind, subject, options, examples)
    schema = review_response_schema(kind, options)
    check = check_review_decision(kind, options, interrupt(request, response_schema=schema))
    refused_answers = 0
    while check.error:
        refused_answers += 1
        again = {**request, "error": check.error}
        check = check_review_decision(kind, options, interrupt(again, response_schema=schema))
    decision: ReviewDecision = check.decision  # type: ignore[assignment]  # validated by the review policy
    chosen = decision["type"]
    after = f" after {refused_answers} refused answer(s)" if refused_answers else ""
    run.step.summary = f"reviewer chose {chosen}{after}"
    return decision


def review_rejected(run: StepRun, what: str, reason: str | None) -> TasklistState:
    """A reviewer's reject ends the run in ``stopped`` with their (redacted) reason."""
    run.step.summary += "; the run stops"
    return stop("review_rejected", REVIEW_REJECTED_MESSAGE.format(what=what) + (f" Reason: {reason}" if reason else ""))
