"""Stage 1–2: read the referenced version plan, then judge its readiness by rules (no model)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policies.redaction import redact
from policies.tasklist_plan import REFERENCE_MESSAGES, allowed_actions, assess_readiness, extract_plan, plan_reference
from runtime.resources import ResourceError
from runtime.tracing import new_run_id
from nodes.tasklist.common import TasklistDeps, ask_guard, counted, progress_of, refused, trace

GRAPH_VERSION = "tasklist-agent/1"


def _failed(run_id: str, code: str, started: dict[str, Any]) -> dict[str, Any]:
    """Bad input fails closed: a static message (never the input echoed back) and no model call."""
    return {
        **started,
        "status": "failed",
        "final_decision": "failed",
        "stop_kind": "input",
        "artifact": None,
        "message": REFERENCE_MESSAGES[code],
        "trace": [trace("read-plan", f"failed closed: {code}", violation=True)],
    }


def read_plan(state: Mapping[str, Any], runtime: Any, *, deps: TasklistDeps) -> dict[str, Any]:
    run_id = state.get("run_id") or new_run_id()
    human_review = deps.review_enabled(runtime)
    started = {
        "run_id": run_id,
        "graph_version": GRAPH_VERSION,
        "human_review": human_review,
        "limits": deps.limits(human_review).as_dict(),
        "counters": {"steps": 0, "optional_context_reads": 0, "draft_revisions": 0, "strategy_regenerations": 0},
        "status": "idle",
        "manual_review_items": [],
    }
    progress = progress_of({"run_id": run_id})
    progress.start("Tasklist agent")
    with progress.step("read-plan", "Read the version plan") as step:
        reference = plan_reference(state.get("request"), state.get("plan_uri"))
        if reference.error:
            step.status, step.summary = "failed", f"refused: {reference.error}"
            return _failed(run_id, reference.error, started)
        verdict = ask_guard({**started, "plan_uri": reference.uri}, "read_plan", resource_uri=reference.uri)
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return {**started, **refused("read-plan", verdict)}
        try:
            resource = deps.resources().read(reference.uri)
        except ResourceError:
            step.status, step.summary = "failed", "refused: unknown_plan"
            return _failed(run_id, "unknown_plan", started)
        step.summary = f"{reference.uri} ({len(resource.text)} chars)"
    return {
        **started,
        "status": verdict.next_status,
        "counters": counted(started),
        "plan_uri": reference.uri,
        "user_goal": redact(reference.user_goal, 1000),
        "plan_text": resource.text,
        "trace": [trace("read-plan", f"read {reference.uri} ({len(resource.text)} chars)")],
    }


def check_readiness(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    with progress_of(state).step("check-readiness", "Check plan readiness") as step:
        verdict = ask_guard(state, "check_readiness")
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused("check-readiness", verdict)
        text, uri = state["plan_text"], state["plan_uri"]
        plan = extract_plan(text, uri, state.get("user_goal", ""))
        readiness = assess_readiness(plan, text, uri)
        actions = allowed_actions(readiness.status)
        detail = ", ".join([*readiness.missing_fields, *readiness.weak_fields]) or "nothing missing"
        step.summary = f"{readiness.status} ({detail}); target {plan.target_version}"
    return {
        "status": verdict.next_status,
        "counters": counted(state),
        "plan": plan.as_dict(),
        "readiness": readiness.as_dict(),
        "allowed_actions": list(actions),
        "trace": [
            trace("check-readiness", f"readiness {readiness.status}: {detail}; target version {plan.target_version}"),
            trace("check-readiness", f"allowed actions: {', '.join(actions)}"),
        ],
    }
