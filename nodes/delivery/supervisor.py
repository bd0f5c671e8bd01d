"""``supervisor_pre`` (execute | clarification_required | blocked, and the exact reviewer-role check
before any worker starts) and ``supervisor_post`` (optional guidance, then the runtime-derived
post-review decision)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from policies.delegation import validate_exact_reviewer_roles
from policies.revision import derive_post_review_decision
from runtime.calls import Contract
from schemas.delivery import SupervisorPostGuidance, SupervisorPreDecision
from nodes.delivery.common import DeliveryDeps, clean, error_label, fail, progress, trace
from nodes.delivery.context import DeliveryContext
from nodes.delivery.prompts import supervisor_post_messages, supervisor_pre_messages
from nodes.delivery.routing import stopped_by_policy, violation_record
from nodes.delivery.state import AfterPre, DeliveryState

PRE_STATUS = {"clarification_required": "clarification_required", "blocked": "blocked"}


def make_supervisor_pre(deps: DeliveryDeps):
    def supervisor_pre(state: DeliveryState, runtime: Runtime[DeliveryContext]) -> Generator[Any, Any, Command[AfterPre]]:
        models = deps.models_for(runtime)
        with progress(state).step("supervisor-pre-decision", "Supervisor pre-decision") as step:
            messages = supervisor_pre_messages(state["requirement_text"], state["context_blocks"])
            try:
                result = yield Contract(
                    "delivery.supervisor_pre", SupervisorPreDecision, messages, models, mode=deps.mode_for(runtime)
                )
            except Exception as error:
                step.status, step.summary = "failed", "the pre-decision was invalid or unavailable"
                metrics = getattr(error, "metrics", {})
                failed = fail("supervisor-pre-decision", "supervisor_failed", "The supervisor's pre-decision failed.",
                              error)
                entries = failed["trace"] + trace("supervisor-pre-decision", error_label(error))
                return Command(update={**failed, "contract_metrics": metrics, "trace": entries}, goto="fail_closed")
            decision = clean(result.value.model_dump(mode="json", exclude_none=True))
            step.summary = f"branch: {decision['branch']}"
        update: DeliveryState = {
            "pre_decision": decision,
            "contract_metrics": result.metrics,
            "trace": trace("supervisor-pre-decision", step.summary),
        }
        if decision["branch"] in PRE_STATUS:
            update["run_status"] = PRE_STATUS[decision["branch"]]
            return Command(update=update, goto="render_report")
        # The declared reviewer set is checked before any worker starts.
        violation = validate_exact_reviewer_roles(decision.get("reviewer_roles", []))
        if violation:
            stopped = stopped_by_policy("supervisor-pre-decision", violation_record(violation))
            return Command(update={**update, **stopped}, goto="fail_closed")
        return Command(update=update, goto="manager")

    return supervisor_pre


def make_supervisor_post(deps: DeliveryDeps):
    def supervisor_post(state: DeliveryState, runtime: Runtime[DeliveryContext]) -> Generator[Any, Any, DeliveryState]:
        models = deps.models_for(runtime)
        bundle = state["review_bundle"]
        warnings: list[str] = []
        entries: list[dict[str, str]] = []
        metrics: dict = {}
        with progress(state).step("supervisor-post-decision", "Post-review decision") as step:
            guidance = None
            try:
                result = yield Contract(
                    "delivery.supervisor_post",
                    SupervisorPostGuidance,
                    supervisor_post_messages(state["requirement_text"], bundle),
                    models,
                    mode=deps.mode_for(runtime),
                )
                guidance, metrics = clean(result.value.model_dump(mode="json")), result.metrics
            except Exception as error:  # guidance is optional: the decision comes from findings anyway
                metrics = getattr(error, "metrics", {})
                warnings.append("Post-review guidance was unavailable; the decision was derived from findings only.")
                entries += trace("supervisor-post-decision", f"guidance unavailable: {error_label(error)}")
            decision = derive_post_review_decision(bundle["status"], bundle["findings"], guidance)
            targets = ", ".join(decision["revision_targets"]) or "none"
            step.summary = f"decision: {decision['action']}; revision targets: {targets}"
        return {
            "post_review_decision": decision,
            "warnings": warnings,
            "contract_metrics": metrics,
            "trace": entries + trace("supervisor-post-decision", step.summary),
        }

    return supervisor_post
