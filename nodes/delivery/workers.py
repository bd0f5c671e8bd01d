"""``plan_worker`` and ``task_worker``: run a sub-agent the policy allowed, on inputs the runtime built.

A failure (invalid output after one repair, a timeout, an error) ends the run as failed: tasks are
never drafted without a plan, and reviews never run without both.
"""

from __future__ import annotations

from typing import Any

from policies.delegation import PLAN_TOOL, TASK_TOOL
from policies.redaction import redact
from runtime.contracts import invoke_contract
from schemas.delivery import DeliveryPlan, DeliveryTasks, SubagentToolResult
from nodes.delivery.common import (
    DeliveryDeps,
    artifact_id,
    artifact_record,
    clean,
    fail,
    outcome_of,
    pending_note,
    progress,
    trace,
    without_markdown,
)
from nodes.delivery.prompts import worker_messages
from nodes.delivery.state import DeliveryState


def plan_counts(plan: dict[str, Any]) -> str:
    return f"{len(plan['delivery_phases'])} phase(s), {len(plan['acceptance_criteria'])} acceptance criteria"


def task_counts(tasks: dict[str, Any]) -> str:
    return f"{len(tasks['tasks'])} task(s)"


def tool_result(value: dict[str, Any], counts: str, title: str) -> dict[str, Any]:
    """The sub-agent's result in the strict tool-result shape; the manager sees only its summary."""
    return SubagentToolResult(
        status="completed",
        markdown=value["markdown"],
        summary_for_manager=redact(f"{counts}. {value['summary']}", 400),
        warnings=[],
        artifact_title=title,
    ).model_dump(mode="json", exclude_none=True)


def make_plan_worker(deps: DeliveryDeps):
    definition = deps.definition(PLAN_TOOL)

    def plan_worker(state: DeliveryState, runtime) -> dict[str, Any]:
        pre = state["pre_decision"]
        with progress(state).step("delegate-plan", "Plan sub-agent") as step:
            messages = worker_messages(
                definition, "plan", state["requirement_text"], state["context_blocks"],
                constraints=[pre["planning_focus"], *pre["assumptions"]],
                note=pending_note(state, PLAN_TOOL),
            )
            try:
                result = invoke_contract("delivery.plan", DeliveryPlan, messages, deps.models_for(runtime),
                                         mode=deps.mode_for(runtime))
            except Exception as error:
                code = outcome_of(error)
                step.status, step.summary = "failed", f"plan sub-agent: {code}"
                return {"delegated": [PLAN_TOOL], "contract_metrics": getattr(error, "metrics", {}),
                        **fail("delegate-plan", code, "The plan sub-agent failed; no plan was produced.")}
            value = clean(result.value.model_dump(mode="json"))
            step.summary = f"plan ready: {plan_counts(value)}"
        record = artifact_record(artifact_id("plan", state["run_id"]), 1, value,
                                 tool_result(value, plan_counts(value), "Implementation plan"))
        return {"plan": record, "delegated": [PLAN_TOOL], "contract_metrics": result.metrics,
                "trace": trace("delegate-plan", step.summary)}

    return plan_worker


def make_task_worker(deps: DeliveryDeps):
    definition = deps.definition(TASK_TOOL)

    def task_worker(state: DeliveryState, runtime) -> dict[str, Any]:
        pre = state["pre_decision"]
        with progress(state).step("delegate-task", "Task sub-agent") as step:
            messages = worker_messages(
                definition, "tasks", state["requirement_text"], state["context_blocks"],
                constraints=[pre["task_focus"]],
                plan=without_markdown(state["plan"]["value"]),
                note=pending_note(state, TASK_TOOL),
            )
            try:
                result = invoke_contract("delivery.tasks", DeliveryTasks, messages, deps.models_for(runtime),
                                         mode=deps.mode_for(runtime))
            except Exception as error:
                code = outcome_of(error)
                step.status, step.summary = "failed", f"task sub-agent: {code}"
                return {"delegated": [TASK_TOOL], "contract_metrics": getattr(error, "metrics", {}),
                        **fail("delegate-task", code, "The task sub-agent failed; no tasks were produced.")}
            value = clean(result.value.model_dump(mode="json"))
            step.summary = f"tasks ready: {task_counts(value)}"
        record = artifact_record(artifact_id("tasks", state["run_id"]), 1, value,
                                 tool_result(value, task_counts(value), "Task breakdown"))
        return {"tasks": record, "delegated": [TASK_TOOL], "contract_metrics": result.metrics,
                "trace": trace("delegate-task", step.summary)}

    return task_worker
