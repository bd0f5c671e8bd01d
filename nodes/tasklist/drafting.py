"""Stage 8–9: draft v1, validate, sort warnings, (optional human revision review), revise once, validate v2."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from reins.policies.text.redaction import redact
from reins.policies.tasklist.review import decide_warning_disposition, revision_review_options
from reins.policies.tasklist.structure import (
    DRAFT_TEXT_LIMIT,
    StructureValidation,
    enforce_header,
    validate_tasklist_structure,
)
from reins.runtime.execution.calls import Text
from reins.runtime.execution.steps import attempt
from reins.nodes.tasklist import prompts
from reins.nodes.tasklist.intake import the_plan
from reins.nodes.tasklist.review import await_review, review_rejected
from reins.nodes.tasklist.steps import StepRun, guarded
from reins.nodes.tasklist.state import TasklistState


def _with_header(state: TasklistState, markdown: str) -> str:
    # The header is the runtime's, whatever the model (or reviewer) wrote. Redacted here, where the
    # text enters state: the draft is the user-visible artifact, and a model may echo a secret or an
    # absolute path from the plan.
    return enforce_header(redact(markdown, DRAFT_TEXT_LIMIT), state["plan_uri"], state["plan"]["target_version"])


@guarded("draft_v1", "Draft task list v1", acts_on=the_plan)
@declare(model=True)
def draft_v1(state: TasklistState, run: StepRun) -> TasklistState:
    outcome = yield from attempt(Text("tasklist.draft", prompts.draft_messages(state), run.models))
    if not outcome.ok:  # a contract failure here: a draft cut off twice
        return run.model_failed("draft", outcome)
    markdown = _with_header(state, outcome.value)
    run.step.summary = f"draft v1 written ({len(markdown)} chars), header enforced"
    return {"drafts": {"v1": markdown}}


def _validate(state: TasklistState, run: StepRun, version: str) -> TasklistState:
    result = validate_tasklist_structure(state["drafts"][version], state["plan_uri"], state["plan"]["target_version"])
    issues = f": {', '.join(result.issue_ids)}" if result.issue_ids else ""
    run.step.summary = f"{version}: {result.status}, score {result.score}, {len(result.issue_ids)} issue(s){issues}"
    return {"validation": {**(state.get("validation") or {}), version: result.as_dict()}}


@guarded("validate_v1", "Validate v1 structure")
def validate_v1(state: TasklistState, run: StepRun) -> TasklistState:
    return _validate(state, run, "v1")


@guarded("validate_v2", "Validate v2 structure")
def validate_v2(state: TasklistState, run: StepRun) -> TasklistState:
    return _validate(state, run, "v2")


@guarded("warning_disposition", "Sort warnings")
def warning_disposition(state: TasklistState, run: StepRun) -> TasklistState:
    disposition = decide_warning_disposition(StructureValidation.from_dict(state["validation"]["v1"]))
    run.step.summary = (
        f"fix now: {', '.join(disposition.fix_now) or 'none'}; {len(disposition.manual_review_items)} manual review item(s)"
    )
    return {
        "warning_disposition": disposition.as_dict(),
        "manual_review_items": [dict(item) for item in disposition.manual_review_items],
    }


@guarded("review_revision", "Revision review", step_id="revision-review")
def review_revision(state: TasklistState, run: StepRun) -> TasklistState:
    """Pause for a person before the automatic revision: approve | edit{markdown} | reject."""
    decision = await_review(
        state, run, "revision_review",
        {
            "question": "The draft needs fixes. Approve one automatic revision, edit the draft yourself, or reject?",
            "plan_uri": state["plan_uri"],
            "fix_now": list(state["warning_disposition"]["fix_now"]),
            "draft": state["drafts"]["v1"],
        },
        revision_review_options(),
    )
    chosen = decision["type"]
    if chosen == "reject":
        return review_rejected(run, "revision", decision.get("reason"))
    if chosen == "edit":
        # The reviewer's own text becomes v2 and is validated directly; it is still the one revision.
        return {
            "status": "revised_v2",
            "drafts": {**state["drafts"], "v2": _with_header(state, decision["markdown"])},
            "revision_review": {"approved": True, "edited": True},
        }
    return {"revision_review": {"approved": True, "edited": False}}


@guarded("revise_v2", "Revise to v2")
@declare(model=True)
def revise_v2(state: TasklistState, run: StepRun) -> TasklistState:
    fix_now = state["warning_disposition"]["fix_now"]
    outcome = yield from attempt(Text("tasklist.revision", prompts.revision_messages(state, fix_now), run.models))
    if not outcome.ok:  # a contract failure here: a draft cut off twice
        return run.model_failed("draft", outcome)
    run.step.summary = f"one automatic revision for: {', '.join(fix_now)}"
    return {"drafts": {**state["drafts"], "v2": _with_header(state, outcome.value)}}


STEPS = (draft_v1, validate_v1, validate_v2, warning_disposition, review_revision, revise_v2)  # this stage's steps, listed for the graph (nodes.tasklist.stages)
