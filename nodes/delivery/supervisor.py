"""``supervisor_pre`` (execute | clarification_required | blocked, and the exact reviewer-role check
before any worker starts) and ``supervisor_post`` (optional guidance, then the runtime-derived
post-review decision, whose revision targets say where the run goes)."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from reins.policies.delivery.delegation import validate_exact_reviewer_roles
from reins.policies.delivery.revision import derive_post_review_decision
from reins.runtime.execution.calls import Contract
from reins.runtime.execution.steps import attempt, failure_label, recorded_step
from reins.schemas.delivery import SupervisorPostGuidance, pre_decision_schema
from reins.schemas.trace import TraceRecord
from reins.nodes.delivery.common import DeliveryDeps, call_failed, clean, progress, trace
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.prompts import supervisor_post_messages, supervisor_pre_messages
from reins.nodes.delivery.routing import after_post, policy_violation, stopped_by_policy
from reins.nodes.delivery.state import AfterPost, AfterPre, DeliveryState, PreDecision

STAGE_PRE = "supervisor-pre-decision"
PRE_STATUS = {"clarification_required": "clarification_required", "blocked": "blocked"}


@declare(model=True, guards=("reviewer_roles",))
def supervisor_pre(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterPre]]:
    reviewers = deps.reviewers
    schema = pre_decision_schema(tuple((spec.role, spec.focus) for spec in reviewers))  # cached per reviewer set
    models = deps.models_for(runtime)
    with recorded_step(progress(state), STAGE_PRE, "Supervisor pre-decision") as step:
        messages = supervisor_pre_messages(state["requirement_text"], state["context_blocks"], reviewers)
        outcome = yield from attempt(
            Contract("delivery.supervisor_pre", schema, messages, models, mode=deps.mode_for(runtime))
        )
        if not outcome.ok:
            step.fail("the pre-decision was invalid or unavailable")
            failed = call_failed(STAGE_PRE, "supervisor_failed", "The supervisor's pre-decision failed.", outcome)
            return Command(update=failed, goto="fail_closed")
        decision: PreDecision = clean(outcome.value.model_dump(mode="json", exclude_none=True))
        step.summary = f"branch: {decision['branch']}"
    update: DeliveryState = {"pre_decision": decision, "trace": [step.trace()]}
    if decision["branch"] in PRE_STATUS:
        update["run_status"] = PRE_STATUS[decision["branch"]]
        return Command(update=update, goto="render_report")
    # The declared reviewer set is checked before any worker starts.
    verdict = validate_exact_reviewer_roles(decision.get("reviewer_roles", []), reviewers.roles)
    if not verdict.allowed:
        return Command(update={**update, **stopped_by_policy(STAGE_PRE, policy_violation(verdict))}, goto="fail_closed")
    return Command(update=update, goto="manager")


@declare(model=True, guards=("revision",))
def supervisor_post(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterPost]]:
    models = deps.models_for(runtime)
    bundle = state["review_bundle"]
    warnings: list[str] = []
    entries: list[TraceRecord] = []
    with recorded_step(progress(state), "supervisor-post-decision", "Post-review decision") as step:
        messages = supervisor_post_messages(state["requirement_text"], bundle, state["context_blocks"])
        outcome = yield from attempt(
            Contract("delivery.supervisor_post", SupervisorPostGuidance, messages, models, mode=deps.mode_for(runtime))
        )
        guidance = clean(outcome.value.model_dump(mode="json")) if outcome.ok else None
        if not outcome.ok:  # guidance is optional: the decision comes from findings anyway
            warnings.append("Post-review guidance was unavailable; the decision was derived from findings only.")
            entries += trace(step.step_id, f"guidance unavailable: {failure_label(outcome.error)}")
        decision = derive_post_review_decision(bundle["status"], bundle["findings"], guidance)
        targets = ", ".join(decision["revision_targets"]) or "none"
        step.summary = f"decision: {decision['action']}; revision targets: {targets}"
    update: DeliveryState = {"post_review_decision": decision, "warnings": warnings, "trace": [*entries, step.trace()]}
    return Command(update=update, goto=after_post(decision))
