"""Stage 3–5: the one controlled planning decision, its two stops, and the one optional context read."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Generator
from typing import Any

from reins.policies.text.redaction import redact_mapping
from reins.policies.tasklist.review import CONTEXT_READ_FAILED_TITLE, manual_item
from reins.runtime.execution.calls import Contract, OffLoop
from reins.runtime.resources import PROMPT_CHARS, ResourceError, cut_for_prompt
from reins.runtime.execution.steps import attempt
from reins.schemas.tasklist import PlanningDecision
from reins.nodes.tasklist import prompts
from reins.nodes.tasklist.common import stop
from reins.nodes.tasklist.steps import StepRun, guarded
from reins.nodes.tasklist.state import TasklistState


@guarded("planning_decision", "Choose the next action")
@declare(model=True)
def planning_decision(state: TasklistState, run: StepRun) -> TasklistState:
    outcome = yield from attempt(Contract(
        "tasklist.planning_decision", PlanningDecision, prompts.planning_messages(state), run.models, mode=run.contract_mode
    ))
    if not outcome.ok:
        return run.model_failed("planning decision", outcome)
    proposed = outcome.value  # the PlanningDecision, validated against its contract
    chosen = proposed.decision.type
    refusal = run.refused_unless_allowed(choice=chosen)
    if refusal is not None:
        return refusal
    run.step.summary = f"chose {chosen} from {len(state['allowed_actions'])} allowed action(s)"
    # Stored redacted: the decision is shown to people, and a model may echo a secret from the plan.
    decision = redact_mapping(proposed.model_dump(mode="json"), 2000)
    update: TasklistState = {"decision": decision}
    if chosen == "proceed_with_manual_review_items":
        items = decision["decision"]["review_items"]
        update["manual_review_items"] = [manual_item(i["title"], i["detail"], i["severity"]) for i in items]
    return update


def _stop_as_decided(state: TasklistState, run: StepRun, field: str, kind: str) -> TasklistState:
    """End the run with the question or boundary message the planning decision wrote."""
    run.step.summary = f"stopped by {run.action}; no draft written"
    return stop(kind, state["decision"]["decision"][field])


@guarded("ask_clarification", "Ask a clarification question")
def ask_clarification(state: TasklistState, run: StepRun) -> TasklistState:
    return _stop_as_decided(state, run, "question", "clarification")


@guarded("stop_with_boundary_message", "Stop at the agent's boundary", step_id="boundary-stop")
def stop_with_boundary_message(state: TasklistState, run: StepRun) -> TasklistState:
    return _stop_as_decided(state, run, "message", "boundary")


def the_decided_resource(state: TasklistState) -> str | None:
    return ((state.get("decision") or {}).get("decision") or {}).get("resource_uri")


@guarded("read_optional_context", "Read optional context", acts_on=the_decided_resource)
@declare(acts=("file_read",))
def read_optional_context(state: TasklistState, run: StepRun) -> Generator[Any, Any, TasklistState]:
    uri = the_decided_resource(state)
    try:
        resource = yield OffLoop(run.deps.resources().read, (uri,))  # off the event loop under ainvoke
    except ResourceError as error:
        # A failed read degrades: the run continues on the plan alone, and a person is told.
        run.step.summary = f"read of {uri} failed; continuing with a manual review item"
        detail = f"{uri} could not be read ({error}); the task list is based on the plan alone."
        return {
            "context_doc": {"uri": uri, "ok": False},
            "manual_review_items": [manual_item(CONTEXT_READ_FAILED_TITLE, detail, "warning")],
        }
    run.step.summary = f"read {uri} ({len(resource.text)} chars)"
    return {"context_doc": {"uri": uri, "ok": True, "text": cut_for_prompt(resource.text, PROMPT_CHARS)}}


STEPS = (planning_decision, ask_clarification, stop_with_boundary_message, read_optional_context)  # this stage's steps, listed for the graph (nodes.tasklist.stages)
