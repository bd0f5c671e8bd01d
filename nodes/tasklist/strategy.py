"""Stage 6–7: the split strategy (adopted, generated after a context read, or regenerated once for a
reviewer) and the optional human strategy review."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from reins.policies.text.redaction import redact, redact_mapping
from reins.policies.tasklist.review import strategy_review_options
from reins.runtime.execution.calls import Contract
from reins.runtime.execution.steps import attempt
from reins.schemas.tasklist import TasklistStrategy
from reins.nodes.tasklist import prompts
from reins.nodes.tasklist.review import await_review, review_rejected
from reins.nodes.tasklist.steps import StepRun, guarded
from reins.nodes.tasklist.state import Strategy, TasklistState


def _describe(strategy: Strategy) -> str:
    low, high = strategy["expected_step_range"]
    return f"{strategy['granularity']}, {low}-{high} steps, {len(strategy['grouping'])} group(s)"


@guarded("decide_strategy", "Decide the split strategy")
@declare(model=True)
def decide_strategy(state: TasklistState, run: StepRun) -> TasklistState:
    regenerating = state["status"] == "strategy_decided"
    if state["status"] == "planning_decided":
        # A proceed decision carries its strategy; it was validated with the decision.
        strategy, how = state["decision"]["strategy"], "adopted from the planning decision"
    else:
        feedback = (state.get("strategy_review") or {}).get("feedback") if regenerating else None
        outcome = yield from attempt(Contract(
            "tasklist.strategy", TasklistStrategy, prompts.strategy_messages(state, feedback), run.models,
            mode=run.contract_mode,
        ))
        if not outcome.ok:
            return run.model_failed("split strategy", outcome)
        strategy = redact_mapping(outcome.value.model_dump(mode="json"), 500)
        how = "regenerated for the reviewer's response" if regenerating else "generated with the optional context"
    run.step.summary = f"strategy {_describe(strategy)}; {how}"
    return {"strategy": strategy, "strategy_review": {"approved": False, "feedback": None}}


@guarded("review_strategy", "Strategy review", step_id="strategy-review")
def review_strategy(state: TasklistState, run: StepRun) -> TasklistState:
    """Pause for a person: approve | edit{strategy} | reject{reason} | respond{feedback} (respond once)."""
    counters, limits = state["counters"], state["limits"]
    options = strategy_review_options(counters["strategy_regenerations"], limits["max_strategy_regenerations"])
    decision = await_review(
        state, run, "strategy_review",
        {
            "question": "Approve the task-list split strategy before the draft is written?",
            "plan_uri": state["plan_uri"],
            "target_version": state["plan"]["target_version"],
            "strategy": state["strategy"],
        },
        options, {"edit": {"type": "edit", "strategy": state["strategy"]}},
    )
    chosen = decision["type"]
    if chosen == "reject":
        return review_rejected(run, "split strategy", decision["reason"])
    if chosen == "respond":
        return {"strategy_review": {"approved": False, "feedback": redact(decision["feedback"], 2000)}}
    edited = {"strategy": redact_mapping(decision["strategy"], 500)} if chosen == "edit" else {}
    return {**edited, "strategy_review": {"approved": True, "feedback": None}}


STEPS = (decide_strategy, review_strategy)  # this stage's steps, listed for the graph (nodes.tasklist.stages)
