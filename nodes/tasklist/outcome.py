"""Stage 10: revision effect and final decision, the artifact, and publishing the outcome."""

from __future__ import annotations

from reins.policies.text.redaction import redact
from reins.policies.tasklist.review import evaluate_revision_effect, manual_item
from reins.policies.tasklist.structure import StructureValidation
from reins.nodes.tasklist.common import progress_of
from reins.nodes.tasklist.steps import StepRun, guarded
from reins.nodes.tasklist.state import TasklistState

BLOCKED_MESSAGE = "The task list still fails structural validation; do not adopt it as it is."


@guarded("revision_effect", "Evaluate the revision")
def revision_effect(state: TasklistState, run: StepRun) -> TasklistState:
    validation = state["validation"]
    before = StructureValidation.from_dict(validation["v1"])
    after = StructureValidation.from_dict(validation["v2"]) if "v2" in validation else None
    effect = evaluate_revision_effect(
        before, after, state["warning_disposition"]["fix_now"], len(state.get("manual_review_items") or ())
    )
    run.step.summary = (
        f"score {effect.score_before} -> {effect.score_after}, fixed {len(effect.fixed_issues)}, "
        f"remaining {len(effect.remaining_issues)}; {effect.final_decision}"
    )
    unresolved = [
        manual_item("Not fixed by the automatic revision", f"Structural finding {issue} remains in v2.", "warning")
        for issue in effect.unresolved_fix_now
    ]
    return {
        "revision_effect": effect.as_dict(),
        "final_decision": effect.final_decision,
        "manual_review_items": unresolved,
    }


@guarded("final", "Assemble the task list")
def final(state: TasklistState, run: StepRun) -> TasklistState:
    drafts, validation = state["drafts"], state["validation"]
    latest = "v2" if "v2" in drafts else "v1"
    artifact = {
        "markdown": drafts[latest],  # redacted and bounded where it entered state (drafting)
        "metadata": {
            "plan_uri": state["plan_uri"],
            "target_version": state["plan"]["target_version"],
            "revision": 2 if latest == "v2" else 1,
            "validated": validation[latest]["status"] != "fail",
        },
    }
    run.step.summary = f"final decision {state['final_decision']}: artifact {latest}"
    return {"artifact": artifact, "message": BLOCKED_MESSAGE if state["final_decision"] == "blocked" else None}


def _summary(state: TasklistState) -> str:
    decision = state.get("final_decision") or "stopped"
    items = len(state.get("manual_review_items") or ())
    version = (state.get("plan") or {}).get("target_version", "unknown")
    artifact = state.get("artifact")
    if artifact:
        meta = artifact["metadata"]
        score = ((state.get("validation") or {}).get(f"v{meta['revision']}") or {}).get("score")
        return (
            f"{decision}: task list for {version} (revision {meta['revision']}, score {score}), "
            f"{items} manual review item(s)."
        )
    kind = state.get("stop_kind") or "guard"
    reasons = {
        "input": "the request did not reference an existing version plan",
        "clarification": "a clarification question was asked",
        "boundary": "the request is outside the tasklist agent's boundary",
        "review_rejected": "the reviewer rejected the run",
        "contract": "a model output did not satisfy its contract",
        "timeout": "the model did not answer in time",
        "guard": "the state machine refused the next action",
    }
    return f"{decision}: {reasons.get(kind, kind)}; no task list was produced."


@guarded("finish")
def finish(state: TasklistState, run: StepRun) -> TasklistState:
    """Publish the outcome: summary, final decision, the end event. Not a step of the machine; the
    guard lets only a terminal run be published."""
    summary = redact(_summary(state), 300)
    decision = state.get("final_decision") or ("failed" if state.get("status") == "failed" else "stopped")
    progress_of(state).end("failed" if decision == "failed" else "completed", summary)
    run.step.summary = f"final decision: {decision}"
    return {"final_decision": decision, "summary": summary}


STEPS = (revision_effect, final, finish)  # this stage's steps, listed for the graph (nodes.tasklist.stages)
