"""Stage 8–9: draft v1, validate, sort warnings, (optional human revision review), revise once, validate v2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policies.redaction import redact
from policies.tasklist_review import decide_warning_disposition, revision_review_options
from policies.tasklist_structure import (
    DRAFT_TEXT_LIMIT,
    StructureValidation,
    enforce_header,
    validate_tasklist_structure,
)
from runtime.calls import Text
from runtime.contracts import ContractError, ContractTimeout
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
from nodes.tasklist.review import await_review, review_rejected


def _write(state: Mapping[str, Any], runtime: Any, deps: TasklistDeps, contract: str, messages: list):
    """Write a draft (``yield from`` it in a node): (markdown with the runtime's header, metrics)."""
    result = yield Text(contract, messages, deps.models_for(runtime))
    version = state["plan"]["target_version"]
    # The header is the runtime's, whatever the model wrote.
    # Redacted here, where model text enters state: the draft is the user-visible artifact, and a model
    # may echo a secret or an absolute path from the plan.
    return enforce_header(redact(result.text, DRAFT_TEXT_LIMIT), state["plan_uri"], version), result.metrics


def draft_v1(state: Mapping[str, Any], runtime: Any, *, deps: TasklistDeps) -> dict[str, Any]:
    with progress_of(state).step("draft-v1", "Draft task list v1") as step:
        verdict = ask_guard(state, "draft_v1", resource_uri=state.get("plan_uri"))
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused("draft-v1", verdict)
        try:
            markdown, metrics = yield from _write(state, runtime, deps, "tasklist.draft", prompts.draft_messages(state))
        except (ContractError, ContractTimeout) as error:  # ContractError: a draft cut off twice
            return model_failed(step, "draft-v1", "draft", error)
        step.summary = f"v1 written ({len(markdown)} chars)"
    return {
        "status": verdict.next_status,
        "counters": counted(state),
        "drafts": {"v1": markdown},
        "metrics": metrics,
        "trace": [trace("draft-v1", f"draft v1 written ({len(markdown)} chars), header enforced")],
    }


def _validate(state: Mapping[str, Any], version: str) -> dict[str, Any]:
    action, step_id = f"validate_{version}", f"validate-{version}"
    with progress_of(state).step(step_id, f"Validate {version} structure") as step:
        verdict = ask_guard(state, action)
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused(step_id, verdict)
        result = validate_tasklist_structure(state["drafts"][version], state["plan_uri"], state["plan"]["target_version"])
        summary = f"{version}: {result.status}, score {result.score}, {len(result.issue_ids)} issue(s)"
        step.summary = summary
    return {
        "status": verdict.next_status,
        "counters": counted(state),
        "validation": {**(state.get("validation") or {}), version: result.as_dict()},
        "trace": [trace(step_id, summary + (f": {', '.join(result.issue_ids)}" if result.issue_ids else ""))],
    }


def validate_v1(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    return _validate(state, "v1")


def validate_v2(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    return _validate(state, "v2")


def warning_disposition(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    with progress_of(state).step("warning-disposition", "Sort warnings") as step:
        verdict = ask_guard(state, "warning_disposition")
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused("warning-disposition", verdict)
        disposition = decide_warning_disposition(StructureValidation.from_dict(state["validation"]["v1"]))
        step.summary = f"fix now {len(disposition.fix_now)}, manual {len(disposition.manual_review_items)}"
    return {
        "status": verdict.next_status,
        "counters": counted(state),
        "warning_disposition": disposition.as_dict(),
        "manual_review_items": [dict(item) for item in disposition.manual_review_items],
        "trace": [trace("warning-disposition", f"fix now: {', '.join(disposition.fix_now) or 'none'}; "
                        f"{len(disposition.manual_review_items)} manual review item(s)")],
    }


def review_revision(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    """Pause for a person before the automatic revision: approve | edit{markdown} | reject."""
    verdict = ask_guard(state, "review_revision")
    progress = progress_of(state)
    if not verdict.allowed:
        progress.event("revision-review", "failed", "Revision review", verdict.reason)
        return refused("revision-review", verdict)
    options = revision_review_options()
    fix_now = state["warning_disposition"]["fix_now"]
    decision, update = await_review(
        state, "revision_review", "revision-review", "Revision review",
        {
            "question": "The draft needs fixes. Approve one automatic revision, edit the draft yourself, or reject?",
            "plan_uri": state["plan_uri"],
            "fix_now": list(fix_now),
            "draft": state["drafts"]["v1"],
        },
        options,
    )
    chosen = decision["type"]
    if chosen == "reject":
        return {**update, **review_rejected("revision-review", "revision", decision.get("reason"))}
    if chosen == "edit":
        # The reviewer's own text becomes v2 and is validated directly; it is still the one revision.
        markdown = enforce_header(redact(decision["markdown"], DRAFT_TEXT_LIMIT), state["plan_uri"], state["plan"]["target_version"])
        return {
            **update,
            "status": "revised_v2",
            "counters": counted(state, draft_revisions=1),
            "drafts": {**state["drafts"], "v2": markdown},
            "revision_review": {"approved": True, "edited": True},
        }
    return {**update, "status": verdict.next_status, "revision_review": {"approved": True, "edited": False}}


def revise_v2(state: Mapping[str, Any], runtime: Any, *, deps: TasklistDeps) -> dict[str, Any]:
    with progress_of(state).step("revise-v2", "Revise to v2") as step:
        verdict = ask_guard(state, "revise_v2")
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused("revise-v2", verdict)
        fix_now = state["warning_disposition"]["fix_now"]
        try:
            markdown, metrics = yield from _write(state, runtime, deps, "tasklist.revision", prompts.revision_messages(state, fix_now))
        except (ContractError, ContractTimeout) as error:  # ContractError: a draft cut off twice
            return model_failed(step, "revise-v2", "draft", error)
        step.summary = f"v2 written for {len(fix_now)} finding(s)"
    return {
        "status": verdict.next_status,
        "counters": counted(state, draft_revisions=1),
        "drafts": {**state["drafts"], "v2": markdown},
        "metrics": metrics,
        "trace": [trace("revise-v2", f"one automatic revision for: {', '.join(fix_now)}")],
    }
