"""Stage 3–5: the one controlled planning decision, its two stops, and the one optional context read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policies.redaction import redact, redact_mapping
from policies.tasklist_review import CONTEXT_READ_FAILED_TITLE, manual_item
from runtime.calls import Contract
from runtime.contracts import ContractError, ContractTimeout
from runtime.resources import PROMPT_CHARS, ResourceError, cut_for_prompt
from schemas.tasklist import PlanningDecision
from nodes.tasklist import prompts
from nodes.tasklist.common import (
    TasklistDeps,
    ask_guard,
    counted,
    model_failed,
    progress_of,
    refused,
    trace,
)


def planning_decision(state: Mapping[str, Any], runtime: Any, *, deps: TasklistDeps) -> dict[str, Any]:
    with progress_of(state).step("planning-decision", "Choose the next action") as step:
        verdict = ask_guard(state, "planning_decision")
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused("planning-decision", verdict)
        try:
            result = yield Contract(
                "tasklist.planning_decision",
                PlanningDecision,
                prompts.planning_messages(state),
                deps.models_for(runtime),
                mode=deps.contract_mode(runtime),
            )
        except (ContractError, ContractTimeout) as error:
            return model_failed(step, "planning-decision", "planning decision", error)
        chosen = result.value.decision.type
        verdict = ask_guard(state, "planning_decision", choice=chosen)
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return {**refused("planning-decision", verdict), "metrics": result.metrics}
        step.summary = f"chose {chosen}"
    # Stored redacted: the decision is shown to people, and a model may echo a secret from the plan.
    decision = redact_mapping(result.value.model_dump(mode="json"), 2000)
    update: dict[str, Any] = {
        "status": verdict.next_status,
        "counters": counted(state),
        "decision": decision,
        "metrics": result.metrics,
        "trace": [trace("planning-decision", f"chose {chosen} from {len(state['allowed_actions'])} allowed action(s)")],
    }
    if chosen == "proceed_with_manual_review_items":
        items = decision["decision"]["review_items"]
        update["manual_review_items"] = [manual_item(i["title"], i["detail"], i["severity"]) for i in items]
    return update


def _stop_as_decided(state: Mapping[str, Any], action: str, step_id: str, title: str, field: str, kind: str) -> dict[str, Any]:
    with progress_of(state).step(step_id, title) as step:
        verdict = ask_guard(state, action)
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused(step_id, verdict)
        step.summary = "the run stops here; no draft is written"
    text = state["decision"]["decision"][field]
    return {
        "status": verdict.next_status,
        "counters": counted(state),
        "final_decision": "stopped",
        "stop_kind": kind,
        "artifact": None,
        "message": redact(text, 800),
        "trace": [trace(step_id, f"stopped by {action}; no draft written")],
    }


def ask_clarification(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    return _stop_as_decided(
        state, "ask_clarification", "ask-clarification", "Ask a clarification question", "question", "clarification"
    )


def stop_with_boundary_message(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    return _stop_as_decided(
        state, "stop_with_boundary_message", "boundary-stop", "Stop at the agent's boundary", "message", "boundary"
    )


def read_optional_context(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    uri = state["decision"]["decision"].get("resource_uri")
    with progress_of(state).step("read-optional-context", "Read optional context") as step:
        verdict = ask_guard(state, "read_optional_context", resource_uri=uri)
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused("read-optional-context", verdict)
        update: dict[str, Any] = {
            "status": verdict.next_status,
            "counters": counted(state, optional_context_reads=1),
        }
        try:
            resource = deps.resources().read(uri)
        except ResourceError as error:
            # A failed read degrades: the run continues on the plan alone, and a person is told.
            step.summary = f"{uri} could not be read; continuing without it"
            detail = f"{uri} could not be read ({error}); the task list is based on the plan alone."
            return {
                **update,
                "context_doc": {"uri": uri, "ok": False},
                "manual_review_items": [manual_item(CONTEXT_READ_FAILED_TITLE, detail, "warning")],
                "trace": [trace("read-optional-context", f"read of {uri} failed; continuing with a manual review item")],
            }
        text = cut_for_prompt(resource.text, PROMPT_CHARS)
        step.summary = f"{uri} ({len(resource.text)} chars)"
    return {
        **update,
        "context_doc": {"uri": uri, "ok": True, "text": text},
        "trace": [trace("read-optional-context", f"read {uri} ({len(resource.text)} chars)")],
    }
