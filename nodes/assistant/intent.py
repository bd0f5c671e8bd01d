"""Intent classification: QA | SIMPLE_TOOL | COMPLEX, through the validated ``assistant.intent``
contract. A COMPLEX intent carries the plan (P of PDCA); plan steps naming tools outside the chat
scope are dropped by the runtime and reported."""

from __future__ import annotations

from typing import Any

from nodes.assistant.deps import AssistantDeps, progress_for
from nodes.assistant.prompts import intent_messages
from nodes.assistant.state import AssistantState
from runtime.calls import Contract
from runtime.contracts import ContractError, ContractTimeout, safe_error
from schemas.assistant import AssistantIntent


def classify_intent(state: AssistantState, runtime: Any, *, deps: AssistantDeps) -> dict[str, Any]:
    trace = list(state.get("trace", []))
    with progress_for(runtime).step("classify-intent", "Classify the request") as step:
        try:
            result = yield Contract(
                "assistant.intent",
                AssistantIntent,
                intent_messages(state, deps.tools),
                deps.models_for(runtime),
                mode=deps.mode_for(runtime),
            )
        except (ContractError, ContractTimeout) as error:
            # Fail closed: without a valid classification no tool runs; the request is answered as QA.
            step.status, step.summary = "failed", "classification invalid; answering without tools"
            trace.append(f"intent: QA (fallback, {safe_error(error, 160)})")
            return {"intent": "QA", "intent_failed": True, "plan": None, "trace": trace,
                    "metrics": getattr(error, "metrics", {})}
        decision = result.value
        plan = None
        if decision.plan is not None:
            plan = decision.plan.model_dump(mode="json")
            known = [s for s in plan["steps"] if deps.tools.get(s["tool"]) is not None]
            dropped = [s["tool"] for s in plan["steps"] if deps.tools.get(s["tool"]) is None]
            if dropped:
                trace.append(f"plan: dropped {len(dropped)} step(s) naming unavailable tools ({', '.join(sorted(set(dropped)))})")
            plan["steps"] = known
            plan["unavailable"] = dropped
        summary = decision.intent + (f" with {len(plan['steps'])} plan step(s)" if plan else "")
        step.summary = summary
    trace.append(f"intent: {summary}")
    return {"intent": decision.intent, "plan": plan, "trace": trace, "metrics": result.metrics}
