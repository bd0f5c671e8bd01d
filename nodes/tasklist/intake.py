"""Stage 1–2: read the referenced version plan, then judge its readiness by rules (no model)."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime

from reins.policies.text.redaction import redact, was_redacted
from reins.policies.tasklist.plan import REFERENCE_MESSAGES, allowed_actions, assess_readiness, extract_plan, plan_reference
from reins.policies.tasklist.machine import Counters
from reins.runtime.execution.calls import OffLoop
from reins.runtime.resources import ResourceError
from reins.runtime.config.tracing import new_run_id
from reins.runtime.execution.steps import trace_record
from reins.nodes.tasklist.common import TasklistDeps, progress_of
from reins.nodes.tasklist.steps import Admission, StepRun, guarded
from reins.nodes.tasklist.state import TasklistState
from reins.nodes.tasklist.context import TasklistContext

GRAPH_VERSION = "tasklist-agent/1"
INPUT_REDACTED_ITEM = {
    "title": "Secret redacted from the request",
    "detail": "A secret in the request was replaced with [redacted] before it was stored or sent to a model.",
    "severity": "info",
}


def _failed(code: str) -> TasklistState:
    """Bad input fails closed: a static message (never the input echoed back) and no model call."""
    return {
        "status": "failed",
        "final_decision": "failed",
        "stop_kind": "input",
        "artifact": None,
        "message": REFERENCE_MESSAGES[code],
        "trace": [trace_record("read-plan", f"failed closed: {code}", violation=True)],
    }


def open_run(state: TasklistState, runtime: Runtime[TasklistContext] | None, deps: TasklistDeps) -> Admission:
    """Start the run (its id, review flag, limits, zero counters) and check the plan reference."""
    run_id = state.get("run_id") or new_run_id()
    human_review = deps.review_enabled(runtime)
    started = {
        "run_id": run_id,
        "graph_version": GRAPH_VERSION,
        "human_review": human_review,
        "limits": deps.limits(human_review).as_dict(),
        "counters": Counters().as_dict(),
        "status": "idle",
        # The request was redacted before it was stored (runtime/execution/user_input.py); say so.
        "manual_review_items": [INPUT_REDACTED_ITEM] if was_redacted(state.get("request")) else [],
    }
    progress_of(started).start("Tasklist agent")
    reference = plan_reference(state.get("request"), state.get("plan_uri"))
    if reference.error:
        return Admission(started, failure=_failed(reference.error), reason=f"refused: {reference.error}")
    return Admission(started, view={"plan_uri": reference.uri, "user_goal": reference.user_goal})


def the_plan(state: TasklistState) -> str | None:
    return state.get("plan_uri")


@guarded("read_plan", "Read the version plan", acts_on=the_plan, admits=open_run)
@declare(acts=("file_read",))
def read_plan(state: TasklistState, run: StepRun) -> Generator[Any, Any, TasklistState]:
    uri = state["plan_uri"]
    try:
        resource = yield OffLoop(run.deps.resources().read, (uri,))  # off the event loop under ainvoke
    except ResourceError:
        run.step.fail("refused: unknown_plan")
        return _failed("unknown_plan")
    run.step.summary = f"read {uri} ({len(resource.text)} chars)"
    return {"plan_uri": uri, "user_goal": redact(state["user_goal"], 1000), "plan_text": resource.text}


@guarded("check_readiness", "Check plan readiness")
def check_readiness(state: TasklistState, run: StepRun) -> TasklistState:
    text, uri = state["plan_text"], state["plan_uri"]
    plan = extract_plan(text, uri, state.get("user_goal", ""))
    readiness = assess_readiness(plan, text, uri)
    actions = allowed_actions(readiness.status)
    detail = ", ".join([*readiness.missing_fields, *readiness.weak_fields]) or "nothing missing"
    run.step.summary = f"readiness {readiness.status}: {detail}; target version {plan.target_version}"
    return {
        "plan": plan.as_dict(),
        "readiness": readiness.as_dict(),
        "allowed_actions": list(actions),
        "trace": [trace_record(run.step_id, f"allowed actions: {', '.join(actions)}")],
    }


STEPS = (read_plan, check_readiness)  # this stage's steps, listed for the graph (nodes.tasklist.stages)
