"""``revise_plan`` then ``revise_tasks``: the one revision the runtime derived from findings.

A revised artifact keeps its id and becomes revision 2; its outcome links to the finding ids that
asked for it and never claims the findings are resolved (nothing is re-reviewed). A failed
revision keeps revision 1 and adds a warning.
"""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from reins.policies.delivery.delegation import PLAN_TOOL, TASK_TOOL
from reins.runtime.execution.calls import Contract
from reins.runtime.llm.failures import failure_cause
from reins.runtime.execution.steps import attempt, recorded_step
from reins.schemas.delivery import DeliveryPlan, DeliveryTasks
from reins.nodes.delivery.common import DeliveryDeps, artifact_record, clean, progress, without_markdown
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.prompts import revision_block, worker_messages
from reins.nodes.delivery.routing import after_plan_revision
from reins.nodes.delivery.state import AfterPlanRevision, DeliveryState, RevisionOutcome
from reins.nodes.delivery.workers import plan_counts, task_counts, tool_result

SPECS = {
    "plan": ("delivery.plan_revision", DeliveryPlan, PLAN_TOOL, "revise-plan", "Revise plan", plan_counts),
    "tasks": ("delivery.task_revision", DeliveryTasks, TASK_TOOL, "revise-tasks", "Revise tasks", task_counts),
}


def _request(state: DeliveryState, target: str) -> dict[str, Any]:
    return next(r for r in state["post_review_decision"]["requests"] if r["targets"] == [target])


@declare(model=True)
def revise_plan(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterPlanRevision]]:
    """``revise_plan``, then ``revise_tasks`` if the decision also targets the tasks, else the report."""
    update = yield from revise("plan", state, runtime, deps)
    return Command(update=update, goto=after_plan_revision(state["post_review_decision"]))


@declare(model=True)
def revise_tasks(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, DeliveryState]:
    return (yield from revise("tasks", state, runtime, deps))


def revise(
    target: str, state: DeliveryState, runtime: Runtime[DeliveryContext], deps: DeliveryDeps
) -> Generator[Any, Any, DeliveryState]:
    contract, schema, tool, step_id, title, counts = SPECS[target]
    request = _request(state, target)
    wanted = set(request["source_finding_ids"])
    findings = [f for f in state["review_bundle"]["findings"] if f["finding_id"] in wanted]
    current = state[target]
    link = {  # what ties the revision to its request, failed or not
        "request_key": request["request_key"],
        "target": target,
        "artifact_id": current["artifact_id"],
        "from_revision": current["revision"],
        "source_finding_ids": list(request["source_finding_ids"]),
        "resolved_claimed": False,  # only a person can say the findings are resolved
    }
    with recorded_step(progress(state), step_id, title) as step:
        messages = worker_messages(
            deps.definition(tool), "plan" if target == "plan" else "tasks", state["requirement_text"], state["context_blocks"],
            plan=without_markdown(state["plan"]["value"]),
            tasks=without_markdown(state["tasks"]["value"]) if target == "tasks" else None,
            extra=revision_block(findings, request),
        )
        outcome = yield from attempt(
            Contract(contract, schema, messages, deps.models_for(runtime), mode=deps.mode_for(runtime))
        )
        if not outcome.ok:
            step.fail(f"{target} revision: {outcome.code}")
            failed = RevisionOutcome(**link, status="failed", to_revision=current["revision"],
                                     failure_code=outcome.code, failure_cause=failure_cause(outcome.error))
            return {
                "revision_outcomes": [failed],
                "warnings": [f"The {target} revision failed ({outcome.code}); revision {current['revision']} stands."],
                "trace": [step.trace()],
            }
        value = clean(outcome.value.model_dump(mode="json"))
        revision = current["revision"] + 1
        step.summary = f"{target} revised to revision {revision}: {counts(value)}"
    result_view = tool_result(value, counts(value), current["result"].get("artifact_title", title))
    return {
        target: artifact_record(current["artifact_id"], revision, value, result_view),
        "revision_outcomes": [RevisionOutcome(**link, status="revised", to_revision=revision)],
        "trace": [step.trace()],
    }
