"""``fail_closed`` and ``render_report``: every run ends with a deterministic report and the public
outputs; an optional polish may reword only the narrative summary and falls back silently."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

import time
from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime

from reins.policies.delivery.report import narrative, render_delivery_report
from reins.policies.models.model_notice import fallback_warnings
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers
from reins.policies.delivery.revision import status_after_revision
from reins.runtime.execution.calls import Contract
from reins.runtime.execution.budget import budget_line, used, worst_case
from reins.runtime.execution.run_ledger import refusal_notes
from reins.runtime.llm.models import served_by_stand_in
from reins.runtime.contracts import CONTRACT_ROLES, fallbacks_per_role, merge_metrics, metrics_totals, models_served
from reins.runtime.execution.steps import attempt, recorded_step
from reins.schemas.delivery import PolishedSummary, RuntimeArtifact
from reins.schemas.trace import TraceRecord
from reins.nodes.delivery.common import DeliveryDeps, artifact_id, progress, trace
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.prompts import polish_messages
from reins.nodes.delivery.state import ArtifactRecord, DeliveryState, RevisionSummary, RunBudget, RunMetrics

@declare()
def fail_closed(state: DeliveryState) -> DeliveryState:
    """Every route here records why first: a failed step, or the rule a policy found broken."""
    failure = state["failure"]
    return {"run_status": "failed", "trace": trace("fail-closed", f"{failure['stage']}: {failure['code']}")}


def _public_artifact(record: ArtifactRecord | None, kind: str, title: str, metadata: dict[str, Any]) -> dict | None:
    if not record:
        return None
    value = record["value"]
    return RuntimeArtifact(
        artifact_id=record["artifact_id"], kind=kind, title=title, markdown=value["markdown"],
        revision=record["revision"], metadata={"summary": value["summary"], **metadata},
    ).model_dump(mode="json")


def public_artifacts(state: DeliveryState, report: str, status: str, reviewers: Reviewers = DEFAULT_REVIEWERS) -> dict[str, Any]:
    plan, tasks = state.get("plan"), state.get("tasks")
    reviews = []
    for outcome in state.get("review_outcomes", []):
        review = outcome.get("review")
        if outcome["outcome"] != "completed" or not review:
            continue
        role = outcome["role"]
        spec = reviewers.of_role(role)
        metadata = {"review_type": role, "source": outcome["tool"], **{k: review[k] for k in spec.metadata_fields}}
        # a blocking review is still an artifact, marked as such
        metadata["blocked"] = spec.verdict_level(review) == "blocker"
        reviews.append(RuntimeArtifact(
            artifact_id=artifact_id(f"review-{role}", state["run_id"]), kind="review", title=f"{spec.title} review",
            markdown=review["markdown"], revision=1, metadata={"summary": review["summary"], **metadata},
        ).model_dump(mode="json"))
    return {
        "plan": _public_artifact(plan, "plan", "Implementation plan", {"source": "plan-subagent"}),
        "tasks": _public_artifact(tasks, "tasks", "Task breakdown", {"source": "task-subagent"}),
        "reviews": reviews,
        "report": RuntimeArtifact(
            artifact_id=artifact_id("report", state.get("run_id") or "unknown"), kind="delivery_report",
            title="Delivery report", markdown=report, revision=1, metadata={"status": status},
        ).model_dump(mode="json"),
    }


def public_metrics(state: DeliveryState) -> RunMetrics:
    per_contract = state.get("contract_metrics") or {}
    totals = metrics_totals(per_contract)
    started = state.get("started_at") or time.time()
    calls = {name: v["business_calls"] + v["encoder_calls"] + v["repair_calls"] for name, v in per_contract.items()}
    roles: dict[str, int] = {}
    for name, count in calls.items():
        role = CONTRACT_ROLES.get(name, "unknown")
        roles[role] = roles.get(role, 0) + count
    refusals = state.get("manager_refusals") or []
    return {
        "calls": calls,
        "calls_per_role": roles,
        "manager_refusals": len(refusals),
        "manager_reasks": sum(1 for record in refusals if record.get("reasked")),
        "business_calls": totals["business_calls"],
        "encoder_calls": totals["encoder_calls"],
        "repair_calls": totals["repair_calls"],
        "retries": totals["retries"],
        "fallbacks_per_role": fallbacks_per_role(per_contract),
        "escalations": totals.get("escalations", 0) + sum(1 for record in refusals if record.get("escalated")),
        "models": models_served(per_contract),
        "failed_calls": totals["failed_calls"],
        "tokens": {"input": totals["input_tokens"], "output": totals["output_tokens"]},
        "elapsed_ms": int((time.time() - started) * 1000),
        "per_contract": per_contract,
    }


def run_budget(state: DeliveryState, runtime: Runtime[DeliveryContext] | None, deps: DeliveryDeps) -> RunBudget:
    """What the run used beside the most its configuration allows (``reins.runtime.execution.budget``)."""
    models = deps.models_for(runtime)
    worst = worst_case("delivery_chain", models, contract_mode=deps.mode_for(runtime), policy=deps.policy,
                       reviewers=deps.reviewers, polish=deps.polish_enabled(runtime),
                       review_timeout_s=deps.review_timeout(runtime, models))
    seconds = time.time() - (state.get("started_at") or time.time())
    spent = used(state.get("contract_metrics") or {}, len(state.get("delegated") or []), seconds)
    return RunBudget(used=spent, worst_case=worst.as_dict(), line=budget_line(spent, worst))


@declare(model=True)
def render_report(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, DeliveryState]:
    events = progress(state)
    outcomes = state.get("revision_outcomes", [])
    status = status_after_revision(state.get("run_status") or "failed", outcomes)
    decision = state.get("post_review_decision")
    entries: list[TraceRecord] = []
    # The polish call's metrics, when it ran: counted here too, as the public metrics are final.
    polish_metrics: dict[str, dict[str, int]] = {}
    models = deps.models_for(runtime)
    primaries = {role: models.label(role) for role in models.models}
    with recorded_step(events, "render-report", "Render delivery report") as step:
        data = {
            "status": status,
            "source_label": state.get("source_label", "inline requirement"),
            "pre_decision": state.get("pre_decision"),
            "plan": _with_revision(state.get("plan")),
            "tasks": _with_revision(state.get("tasks")),
            "review_bundle": state.get("review_bundle"),
            "revision": {"decision": decision, "outcomes": outcomes},
            "warnings": [*state.get("warnings", []), *fallback_warnings(
                fallbacks_per_role(state.get("contract_metrics") or {}), primaries), *refusal_notes()],
            "governance": state.get("governance"),
            "failure": state.get("failure"),
            "models": models_served(state.get("contract_metrics") or {}),
            "primaries": primaries,
        }
        data["stand_in"] = served_by_stand_in(data["models"])
        summary = None
        if deps.polish_enabled(runtime) and not (state.get("failure") or {}).get("stage") == "load":
            polished = yield from attempt(
                Contract("delivery.report_polish", PolishedSummary, polish_messages(status, narrative(data, deps.reviewers)),
                         deps.models_for(runtime))
            )
            polish_metrics = dict(polished.metrics)
            if polished.ok:
                summary = polished.value.summary
                entries += trace(step.step_id, "narrative summary polished")
            else:  # polish is optional: fall back to the rendered summary
                entries += trace(step.step_id, "polish unavailable; rendered summary kept")
        report = render_delivery_report(data, summary, deps.reviewers)
        step.summary = f"status {status}"
    entries.append(step.trace())
    final_state = {**state, "contract_metrics": merge_metrics(state.get("contract_metrics"), polish_metrics)}
    events.end(status, f"status {status}")
    return {
        "run_status": status,
        "report": report,
        "artifacts": public_artifacts(state, report, status, deps.reviewers),
        "review_bundle": state.get("review_bundle"),
        "post_review_decision": decision,
        "revision": RevisionSummary(requests=(decision or {}).get("requests", []), outcomes=outcomes),
        "policy_violation": state.get("policy_violation"),
        "failure": state.get("failure"),
        "metrics": {**public_metrics(final_state), "budget": run_budget(final_state, runtime, deps)},
        "trace": entries,
    }


def _with_revision(record: ArtifactRecord | None) -> dict[str, Any] | None:
    return {**record["value"], "revision": record["revision"]} if record else None
