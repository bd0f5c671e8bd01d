"""What every tasklist step shares: the guard's view of the run, refusals and failures, progress, models."""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.runtime import Runtime

from reins.policies.text.redaction import redact
from reins.policies.tasklist.machine import Counters, Limits, Machine, Verdict, limits_for
from reins.runtime.config.context import resolve_contract_mode, resolve_models
from reins.runtime.llm.failures import stage_failure
from reins.runtime.llm.models import ModelSet
from reins.runtime.execution.progress import Progress
from reins.runtime.resources import ResourceResolver
from reins.runtime.execution.steps import CONTRACT_FAILURE, TIMEOUT, Attempt, RecordedStep, trace_record
from reins.nodes.tasklist.state import TasklistState
from reins.nodes.tasklist.context import TasklistContext

WORKFLOW = "tasklist"

# Static, user-facing messages for runs that stop without a model-written message.
GUARD_STOP_MESSAGE = "The run stopped: the next action was not allowed by the tasklist agent's state machine."
CONTRACT_STOP_MESSAGE = "The run stopped safely: the model's {what} did not satisfy its contract."
TIMEOUT_MESSAGE = "The run failed: the model did not answer in time."


@dataclass(frozen=True)
class TasklistDeps:
    """Build-time options of one compiled graph (models, resources, review, limits)."""

    models: ModelSet | None = None
    resolver: ResourceResolver | None = None
    human_review: bool = False
    max_steps: int | None = None

    def models_for(self, runtime: Runtime[TasklistContext] | None) -> ModelSet:
        return resolve_models(getattr(runtime, "context", None), self.models)

    def contract_mode(self, runtime: Runtime[TasklistContext] | None) -> str:
        return resolve_contract_mode(getattr(runtime, "context", None))

    def resources(self) -> ResourceResolver:
        # The default resolver reads REINS_DOCS_ROOT at read time, so building needs no environment.
        return self.resolver or ResourceResolver()

    def review_enabled(self, runtime: Runtime[TasklistContext] | None) -> bool:
        context = getattr(runtime, "context", None)
        return bool(self.human_review or getattr(context, "human_review", False))

    def limits(self, human_review: bool) -> Limits:
        return limits_for(human_review, self.max_steps)


def machine_of(state: TasklistState) -> Machine:
    """The guard's view of the run, rebuilt from plain state."""
    decision = (state.get("decision") or {}).get("decision") or {}
    review = state.get("strategy_review") or {}
    disposition = state.get("warning_disposition")
    limits = state.get("limits") or limits_for(bool(state.get("human_review"))).as_dict()
    return Machine(
        status=state.get("status") or "idle",
        counters=Counters(**(state.get("counters") or {})),
        limits=Limits(**limits),
        human_review=bool(state.get("human_review")),
        plan_uri=state.get("plan_uri"),
        allowed_actions=tuple(state.get("allowed_actions") or ()),
        decision_type=decision.get("type"),
        decision_uri=decision.get("resource_uri"),
        strategy_approved=bool(review.get("approved")),
        feedback_pending=bool(review.get("feedback")),
        fix_now_count=None if disposition is None else len(disposition.get("fix_now", ())),
        revision_approved=bool((state.get("revision_review") or {}).get("approved")),
    )


def progress_of(state: TasklistState) -> Progress:
    return Progress(WORKFLOW, state.get("run_id") or "unknown")


def stop(kind: str, message: str) -> TasklistState:
    """End the run in ``stopped`` with no task list and ``message`` for the user."""
    return {"status": "stopped", "final_decision": "stopped", "stop_kind": kind, "artifact": None, "message": redact(message, 800)}


def stopped(step: str, reason: str, *, kind: str, message: str = GUARD_STOP_MESSAGE) -> TasklistState:
    """End the run in ``stopped``: the reason goes to the trace, a static message to the user."""
    return {
        **stop(kind, message),
        "trace": [trace_record(step, f"stopped: {reason}", violation=True if kind == "guard" else None)],
    }


def refused(step: str, verdict: Verdict) -> TasklistState:
    return stopped(step, f"guard refused — {verdict.reason}", kind="guard")


def model_failed(step: RecordedStep, what: str, outcome: Attempt, *, stage: str | None = None) -> TasklistState:
    """End the run after a failed model call, the step marked failed: invalid output after the one
    repair stops it safely; a timeout or a provider failure (retries and fallbacks already spent)
    fails it with a named cause (``draft failed: connection refused``) — no provider error escapes."""
    if outcome.code != CONTRACT_FAILURE:
        assert outcome.error is not None
        line = stage_failure(stage or step.step_id, outcome.error)
        step.fail(line)
        return {
            "status": "failed",
            "final_decision": "failed",
            "stop_kind": "timeout" if outcome.code == TIMEOUT else "provider",
            "artifact": None,
            "message": TIMEOUT_MESSAGE if outcome.code == TIMEOUT else f"The run failed: {line}.",
            "trace": [trace_record(step.step_id, f"failed: {line}")],
        }
    step.fail(f"invalid {what} after one repair")
    message = CONTRACT_STOP_MESSAGE.format(what=what)
    return stopped(step.step_id, str(outcome.error), kind="contract", message=message)
