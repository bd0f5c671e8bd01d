"""``synthesize``: join the review outcomes into the review bundle (pure rules, no model), then
go on to the post-review decision or straight to the report."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from langgraph.types import Command

from reins.policies.delivery.review_bundle import build_review_bundle
from reins.policies.delivery.reviewers import count_word
from reins.runtime.execution.steps import recorded_step
from reins.nodes.delivery.common import DeliveryDeps, progress
from reins.nodes.delivery.routing import after_synthesis
from reins.nodes.delivery.state import AfterSynthesis, DeliveryState, Failure


@declare(guards=("review_bundle",))
def synthesize(state: DeliveryState, *, deps: DeliveryDeps) -> Command[AfterSynthesis]:
    reviewers = deps.reviewers
    outcomes = state.get("review_outcomes", [])
    events = progress(state)
    completed = sum(1 for o in outcomes if o["outcome"] == "completed")
    events.event(
        "delegate-review-group",
        "completed" if completed else "failed",
        "Parallel review group",
        f"{completed} of {len(reviewers)} reviews completed",
        max((o.get("elapsed_ms", 0) for o in outcomes), default=0),
    )
    with recorded_step(events, "synthesize-report", "Rule-based synthesis") as step:
        bundle = build_review_bundle(outcomes, reviewers)
        step.summary = (
            f"status {bundle['status']}: {len(bundle['findings'])} merged finding(s), "
            f"{len(bundle['conflicts'])} conflict(s), {len(bundle['missing'])} missing review(s)"
        )
    update: DeliveryState = {
        "review_bundle": bundle,
        "run_status": bundle["status"],
        "trace": [step.trace()],
    }
    if bundle["status"] == "failed":
        update["failure"] = Failure(
            stage="delegate-review-group",
            code="all_reviews_failed",
            message=f"All {count_word(len(reviewers))} reviews failed; nothing was reviewed.",
        )
    return Command(update=update, goto=after_synthesis(bundle))
