"""Stage 6–7: the split strategy (adopted, generated after a context read, or regenerated once for a
reviewer) and the optional human strategy review."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policies.redaction import redact, redact_mapping
from policies.tasklist_review import strategy_review_options
from runtime.calls import Contract
from runtime.contracts import ContractError, ContractTimeout
from schemas.tasklist import TasklistStrategy
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


def _describe(strategy: Mapping[str, Any]) -> str:
    low, high = strategy["expected_step_range"]
    return f"{strategy['granularity']}, {low}-{high} steps, {len(strategy['grouping'])} group(s)"


def decide_strategy(state: Mapping[str, Any], runtime: Any, *, deps: TasklistDeps) -> dict[str, Any]:
    with progress_of(state).step("decide-strategy", "Decide the split strategy") as step:
        verdict = ask_guard(state, "decide_strategy")
        if not verdict.allowed:
            step.status, step.summary = "failed", verdict.reason
            return refused("decide-strategy", verdict)
        feedback = (state.get("strategy_review") or {}).get("feedback")
        regenerating = state["status"] == "strategy_decided"
        if state["status"] == "planning_decided":
            # A proceed decision carries its strategy; it was validated with the decision.
            strategy, metrics, how = state["decision"]["strategy"], {}, "adopted from the planning decision"
        else:
            try:
                result = yield Contract(
                    "tasklist.strategy",
                    TasklistStrategy,
                    prompts.strategy_messages(state, feedback if regenerating else None),
                    deps.models_for(runtime),
                    mode=deps.contract_mode(runtime),
                )
            except (ContractError, ContractTimeout) as error:
                return model_failed(step, "decide-strategy", "split strategy", error)
            strategy, metrics = redact_mapping(result.value.model_dump(mode="json"), 500), result.metrics
            how = "regenerated for the reviewer's response" if regenerating else "generated with the optional context"
        step.summary = f"{_describe(strategy)} ({how})"
    return {
        "status": verdict.next_status,
        "counters": counted(state, strategy_regenerations=1 if regenerating else 0),
        "strategy": strategy,
        "strategy_review": {"approved": False, "feedback": None},
        "metrics": metrics,
        "trace": [trace("decide-strategy", f"strategy {_describe(strategy)}; {how}")],
    }


def review_strategy(state: Mapping[str, Any], *, deps: TasklistDeps) -> dict[str, Any]:
    """Pause for a person: approve | edit{strategy} | reject{reason} | respond{feedback} (respond once)."""
    verdict = ask_guard(state, "review_strategy")
    progress = progress_of(state)
    if not verdict.allowed:
        progress.event("strategy-review", "failed", "Strategy review", verdict.reason)
        return refused("strategy-review", verdict)
    counters, limits = state["counters"], state["limits"]
    options = strategy_review_options(counters["strategy_regenerations"], limits["max_strategy_regenerations"])
    decision, update = await_review(
        state, "strategy_review", "strategy-review", "Strategy review",
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
        return {**update, **review_rejected("strategy-review", "split strategy", decision["reason"])}
    if chosen == "respond":
        return {**update, "status": verdict.next_status, "strategy_review": {"approved": False, "feedback": redact(decision["feedback"], 2000)}}
    if chosen == "edit":
        update["strategy"] = redact_mapping(decision["strategy"], 500)
    return {**update, "status": verdict.next_status, "strategy_review": {"approved": True, "feedback": None}}
