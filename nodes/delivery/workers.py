"""``plan_worker`` and ``task_worker``: run a sub-agent the policy allowed, on inputs the runtime built.

A failure (invalid output after one repair, a timeout, an error) ends the run as failed: tasks are
never drafted without a plan, and reviews never run without both.
"""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel

from reins.policies.delivery.delegation import PLAN_TOOL, TASK_TOOL
from reins.policies.text.redaction import redact
from reins.runtime.execution.calls import Contract
from reins.runtime.execution.steps import attempt, recorded_step
from reins.schemas.delivery import DeliveryPlan, DeliveryTasks, SubagentToolResult
from reins.nodes.delivery.common import (
    DeliveryDeps,
    artifact_id,
    artifact_record,
    clean,
    call_failed,
    pending_note,
    progress,
    without_markdown,
)
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.prompts import worker_messages
from reins.nodes.delivery.routing import after_worker
from reins.nodes.delivery.state import AfterWorker, DeliveryState, ToolResultView


def plan_counts(plan: dict[str, Any]) -> str:
    return f"{len(plan['delivery_phases'])} phase(s), {len(plan['acceptance_criteria'])} acceptance criteria"


def task_counts(tasks: dict[str, Any]) -> str:
    return f"{len(tasks['tasks'])} task(s)"


def tool_result(value: dict[str, Any], counts: str, title: str) -> ToolResultView:
    """The sub-agent's result in the strict tool-result shape; the manager sees only its summary."""
    return SubagentToolResult(
        status="completed",
        markdown=value["markdown"],
        summary_for_manager=redact(f"{counts}. {value['summary']}", 400),
        warnings=[],
        artifact_title=title,
    ).model_dump(mode="json", exclude_none=True)  # type: ignore[return-value]  # the same fields, as data


@dataclass(frozen=True)
class WorkerSpec:
    """What differs between the plan and the task sub-agent; everything else is one procedure."""

    tool: str
    kind: str  # the artifact kind it produces: "plan" | "tasks"
    step: str  # progress step id
    title: str
    contract: str
    schema: type[BaseModel]
    artifact_title: str
    counts: Callable[[dict[str, Any]], str]
    inputs: Callable[[DeliveryState], dict[str, Any]]  # constraints and input artifacts from state


PLAN_WORKER = WorkerSpec(
    PLAN_TOOL, "plan", "delegate-plan", "Plan sub-agent", "delivery.plan", DeliveryPlan, "Implementation plan",
    plan_counts,
    lambda state: {"constraints": [state["pre_decision"]["planning_focus"], *state["pre_decision"]["assumptions"]]},
)
TASK_WORKER = WorkerSpec(
    TASK_TOOL, "tasks", "delegate-task", "Task sub-agent", "delivery.tasks", DeliveryTasks, "Task breakdown",
    task_counts,
    lambda state: {"constraints": [state["pre_decision"]["task_focus"]], "plan": without_markdown(state["plan"]["value"])},
)


@declare(model=True, acts=("subagent",))
def plan_worker(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterWorker]]:
    return (yield from work(PLAN_WORKER, state, runtime, deps))


@declare(model=True, acts=("subagent",))
def task_worker(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterWorker]]:
    return (yield from work(TASK_WORKER, state, runtime, deps))


def work(
    spec: WorkerSpec, state: DeliveryState, runtime: Runtime[DeliveryContext], deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterWorker]]:
    update = yield from produce(spec, state, runtime, deps)
    return Command(update=update, goto=after_worker(update))


def produce(
    spec: WorkerSpec, state: DeliveryState, runtime: Runtime[DeliveryContext], deps: DeliveryDeps
) -> Generator[Any, Any, DeliveryState]:
    """The artifact, or the failure that ends the run."""
    label = spec.title.lower()
    with recorded_step(progress(state), spec.step, spec.title) as step:
        messages = worker_messages(
            deps.definition(spec.tool), spec.kind, state["requirement_text"], state["context_blocks"],
            note=pending_note(state, spec.tool), **spec.inputs(state),
        )
        outcome = yield from attempt(
            Contract(spec.contract, spec.schema, messages, deps.models_for(runtime), mode=deps.mode_for(runtime))
        )
        if not outcome.ok:
            step.fail(f"{label}: {outcome.code}")
            produced = "was" if spec.kind == "plan" else "were"
            message = f"The {label} failed; no {spec.kind} {produced} produced."
            return {"delegated": [spec.tool], **call_failed(spec.step, outcome.code, message, outcome)}
        value = clean(outcome.value.model_dump(mode="json"))
        step.summary = f"{spec.kind} ready: {spec.counts(value)}"
    record = artifact_record(artifact_id(spec.kind, state["run_id"]), 1, value,
                             tool_result(value, spec.counts(value), spec.artifact_title))
    return {spec.kind: record, "delegated": [spec.tool], "trace": [step.trace()]}
