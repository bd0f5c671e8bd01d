"""Intent classification: QA | SIMPLE_TOOL | COMPLEX, through the validated ``assistant.intent``
contract. A COMPLEX intent carries the plan (P of PDCA); plan steps naming tools outside the chat
scope are dropped by the runtime and reported."""

from __future__ import annotations

from reins.policies.assistant.intent import settled_intent
from reins.policies.audit.guard_coverage import declare

from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import AssistantDeps, progress_for
from reins.nodes.assistant.prompts import intent_messages
from reins.nodes.assistant.state import AssistantState, NodeSteps, Plan, traced
from reins.runtime.execution.calls import Contract
from reins.runtime.llm.failures import stage_failure
from reins.runtime.tools.registry import ScopedTools
from reins.runtime.execution.steps import EXECUTION_FAILED, attempt, recorded_step
from reins.schemas.assistant import AssistantIntent, AssistantPlan


def available_plan(plan: AssistantPlan, tools: ScopedTools) -> Plan:
    """The plan with only the steps naming a chat tool; the others' tools listed as unavailable."""
    dumped = plan.model_dump(mode="json")
    steps = dumped["steps"]
    return {
        "goal": dumped["goal"],
        "steps": [s for s in steps if tools.get(s["tool"]) is not None],
        "unavailable": [s["tool"] for s in steps if tools.get(s["tool"]) is None],
    }


@declare(model=True)
def classify_intent(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> NodeSteps:
    tools = deps.tools_for(runtime)
    with recorded_step(progress_for(runtime), "classify-intent", "Classify the request") as step:
        outcome = yield from attempt(
            Contract(
                "assistant.intent",
                AssistantIntent,
                intent_messages(state, tools),
                deps.models_for(runtime, state),
                mode=deps.mode_for(runtime),
            )
        )
        if not outcome.ok:
            # Fail closed: without a valid classification no tool runs; the request is answered as QA
            # (a provider that failed for good is named, and no further model call is made).
            failure = stage_failure("classify_intent", outcome.error) if outcome.code == EXECUTION_FAILED else None
            step.fail(failure or f"QA (fallback, {outcome.reason()})")
            return {"intent": "QA", "intent_failed": True, "failure": failure, "plan": None,
                    "trace": traced(state, step.trace())}
        decision = outcome.value
        plan = None if decision.plan is None else available_plan(decision.plan, tools)
        intent, raised = settled_intent(decision.intent, state.get("request", ""), tools.names)
        step.summary = intent + (f" with {len(plan['steps'])} plan step(s)" if plan else "")
        if raised:
            step.summary += f" (the model said QA; {raised})"
        if plan and plan["unavailable"]:
            unavailable = ", ".join(sorted(set(plan["unavailable"])))
            step.summary += f"; dropped {len(plan['unavailable'])} step(s) naming unavailable tools ({unavailable})"
    return {"intent": intent, "plan": plan, "trace": traced(state, step.trace())}
