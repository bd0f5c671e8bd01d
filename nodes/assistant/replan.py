"""Replanning in a COMPLEX turn: after a plan step failed twice in a row the model proposes a new
plan for the work left (``assistant.replan``, validated like the first plan), once per turn; the
next failure skips the step, and a skipped step counts as finished: once every other step is, the
loop ends. The rules are ``reins.policies.assistant.replanning``."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import AssistantDeps, progress_for
from reins.nodes.assistant.executor import route_after_observation
from reins.nodes.assistant.intent import available_plan
from reins.nodes.assistant.prompts import replan_messages
from reins.nodes.assistant.state import AssistantState, NodeSteps, Plan, traced
from reins.policies.assistant.replanning import (
    CONTINUE,
    REPLAN,
    RevisionDecision,
    decide_revision,
    merge_replan,
    plan_settled,
)
from reins.runtime.execution.calls import Contract
from reins.runtime.execution.steps import attempt, recorded_step
from reins.schemas.assistant import AssistantReplan


def revision_due(state: AssistantState) -> RevisionDecision:
    plan = state.get("plan")
    if state.get("intent") != "COMPLEX" or not plan or state.get("stop_reason"):
        return RevisionDecision(CONTINUE)
    return decide_revision(
        state.get("records", []),
        replans_used=len(plan.get("replaced", [])),
        replacement_steps=plan.get("replacement", []),
    )


def route_after_tool(state: AssistantState) -> str:
    """A failing plan step is revised first; a plan whose steps are all finished or skipped is
    answered; otherwise the loop goes on as the executor routes."""
    if revision_due(state).action != CONTINUE:
        return "revise_plan"
    if plan_settled(state.get("plan"), state.get("records", [])):
        return "draft_answer"
    return route_after_observation(state)


def route_after_revision(state: AssistantState) -> str:
    """Back to the loop, unless the skip left no plan step to serve."""
    return "draft_answer" if plan_settled(state.get("plan"), state.get("records", [])) else "propose_step"


@declare(model=True, guards=("replanning",))
def revise_plan(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> NodeSteps:
    decision = revision_due(state)
    plan: Plan = dict(state["plan"])  # type: ignore[assignment]  # revision_due saw a plan
    step_id = int(decision.step or 0)
    with recorded_step(progress_for(runtime), f"replan-{step_id}", f"Revise plan step {step_id}") as step:
        if decision.action == REPLAN:
            outcome = yield from attempt(
                Contract("assistant.replan", AssistantReplan, replan_messages(state, deps.tools_for(runtime), step_id),
                         deps.models_for(runtime), mode=deps.mode_for(runtime))
            )
            fresh = available_plan(outcome.value.plan, deps.tools_for(runtime)) if outcome.ok else None
            if fresh and fresh["steps"]:
                done = {r["step"] for r in state.get("records", []) if r.get("ok") and r.get("step") is not None}
                steps, added = merge_replan(plan["steps"], done, fresh["steps"])
                plan.update(steps=steps, replaced=[step_id], replacement=added,
                            unavailable=[*plan["unavailable"], *fresh["unavailable"]])
                step.summary = f"step {step_id} failed twice; replanned as step(s) {', '.join(map(str, added))}"
                return {"plan": plan, "trace": traced(state, step.trace())}
            why = outcome.reason() if not outcome.ok else "no usable step"
            step.fail(f"step {step_id} failed twice; the replan failed ({why}), the step is skipped")
            plan["replaced"] = [step_id]  # the one replan is spent
        else:
            step.summary = f"step {step_id} failed again; skipped"
        plan["skipped"] = [*plan.get("skipped", []), step_id]
        if plan_settled(plan, state.get("records", [])):
            step.summary += "; no plan step is left, the loop ends"
    return {"plan": plan, "trace": traced(state, step.trace())}
