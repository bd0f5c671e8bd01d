"""``revise_plan`` then ``revise_tasks``: the one revision the runtime derived from findings.

A revised artifact keeps its id and becomes revision 2; its outcome links to the finding ids that
asked for it and never claims the findings are resolved (nothing is re-reviewed). A failed
revision keeps revision 1 and adds a warning.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime

from policies.delegation import PLAN_TOOL, TASK_TOOL
from runtime.calls import Contract
from schemas.delivery import DeliveryPlan, DeliveryTasks
from runtime.failures import failure_cause
from nodes.delivery.common import DeliveryDeps, artifact_record, clean, outcome_of, progress, trace, without_markdown
from nodes.delivery.context import DeliveryContext
from nodes.delivery.prompts import revision_block, worker_messages
from nodes.delivery.state import DeliveryState
from nodes.delivery.workers import plan_counts, task_counts, tool_result

SPECS = {
    "plan": ("delivery.plan_revision", DeliveryPlan, PLAN_TOOL, "revise-plan", "Revise plan", plan_counts),
    "tasks": ("delivery.task_revision", DeliveryTasks, TASK_TOOL, "revise-tasks", "Revise tasks", task_counts),
}


def _request(state: DeliveryState, target: str) -> dict[str, Any]:
    return next(r for r in state["post_review_decision"]["requests"] if r["targets"] == [target])


def make_reviser(deps: DeliveryDeps, target: str):
    contract, schema, tool, step_id, title, counts = SPECS[target]
    definition = deps.definition(tool)

    def revise(state: DeliveryState, runtime: Runtime[DeliveryContext]) -> Generator[Any, Any, DeliveryState]:
        request = _request(state, target)
        wanted = set(request["source_finding_ids"])
        findings = [f for f in state["review_bundle"]["findings"] if f["finding_id"] in wanted]
        current = state[target]
        outcome = {
            "request_key": request["request_key"],
            "target": target,
            "artifact_id": current["artifact_id"],
            "from_revision": current["revision"],
            "source_finding_ids": list(request["source_finding_ids"]),
            "resolved_claimed": False,  # only a person can say the findings are resolved
        }
        with progress(state).step(step_id, title) as step:
            messages = worker_messages(
                definition, "plan" if target == "plan" else "tasks", state["requirement_text"], state["context_blocks"],
                plan=without_markdown(state["plan"]["value"]),
                tasks=without_markdown(state["tasks"]["value"]) if target == "tasks" else None,
                extra=revision_block(findings, request),
            )
            try:
                result = yield Contract(contract, schema, messages, deps.models_for(runtime), mode=deps.mode_for(runtime))
            except Exception as error:
                code = outcome_of(error)
                step.status, step.summary = "failed", f"{target} revision: {code}"
                outcome.update(status="failed", to_revision=current["revision"], failure_code=code,
                               failure_cause=failure_cause(error))
                return {
                    "revision_outcomes": [outcome],
                    "warnings": [f"The {target} revision failed ({code}); revision {current['revision']} stands."],
                    "contract_metrics": getattr(error, "metrics", {}),
                    "trace": trace(step_id, step.summary),
                }
            value = clean(result.value.model_dump(mode="json"))
            revision = current["revision"] + 1
            step.summary = f"{target} revised to revision {revision}: {counts(value)}"
        outcome.update(status="revised", to_revision=revision)
        result_view = tool_result(value, counts(value), current["result"].get("artifact_title", title))
        record = artifact_record(current["artifact_id"], revision, value, result_view)
        return {
            target: record,
            "revision_outcomes": [outcome],
            "contract_metrics": result.metrics,
            "trace": trace(step_id, step.summary),
        }

    revise.__name__ = f"revise_{target}"
    return revise
