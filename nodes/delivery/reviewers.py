"""``reviewer``: one of the parallel reviews (one per row of the reviewer table) (a ``Send`` target), isolated from its peers.

Each reviewer has its own wall-clock deadline (an ``asyncio`` timeout under ``ainvoke``) and turns every failure into its outcome —
``contract_failure`` | ``timeout`` | ``execution_failed`` — so one failure never cancels the others;
the outcomes join through the ``review_outcomes`` reducer.
"""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

import time
from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime

from reins.runtime.execution.calls import Contract, Within
from reins.runtime.contracts import ContractError
from reins.runtime.llm.failures import failure_cause
from reins.runtime.execution.steps import attempt, failure_code
from reins.nodes.delivery.common import DeliveryDeps, clean, trace
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.prompts import worker_messages
from reins.nodes.delivery.state import DeliveryState, ReviewerTask, ReviewFailure, ReviewOutcome


def review_failure(error: BaseException) -> ReviewFailure:
    """Why a reviewer has no review: the failure code, its redacted cause, a contract's issue codes."""
    failure = ReviewFailure(code=failure_code(error), cause=failure_cause(error))
    if isinstance(error, ContractError):
        failure["issues"] = [issue.code for issue in error.issues]
    return failure


@declare(model=True, acts=("subagent",))
def reviewer(
    task: ReviewerTask, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, DeliveryState]:
    role, tool = task["role"], task["tool"]
    spec = deps.reviewers.of_role(role)
    models = deps.models_for(runtime).serving("reviewer", by=spec.model_role)
    mode = deps.mode_for(runtime)
    timeout_s = deps.review_timeout(runtime, models)
    messages = worker_messages(
        deps.definition(tool), spec.context, task["requirement_text"], task["context_blocks"],
        constraints=[task["focus"]] if task["focus"] else [],
        plan=task["plan"], tasks=task["tasks"], note=task["note"],
    )
    request = Within(timeout_s, Contract(spec.contract, spec.schema, messages, models, mode=mode), f"reviewer-{role}")
    started = time.perf_counter()
    outcome = yield from attempt(request)
    record = ReviewOutcome(
        role=role,
        tool=tool,
        outcome=outcome.code or "completed",
        review=clean(outcome.value.model_dump(mode="json")) if outcome.ok else None,
        failure=None if outcome.ok else review_failure(outcome.error),
        elapsed_ms=int((time.perf_counter() - started) * 1000),
    )
    return {
        "review_outcomes": [record],
        "delegated": [tool],
        "trace": trace(f"review-{role}", f"{role} review: {record['outcome']}"),
    }
