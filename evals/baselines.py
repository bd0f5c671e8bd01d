"""The three baselines, on the same ModelSet and the same inputs and context documents.

(a) ``single_agent`` — one free-text call (``eval.single_agent``); the status is its ``STATUS`` line.
(b) ``fixed_multi_agent`` — plan → tasks → one markdown review per reviewer (in parallel); the status comes
    from marker lines (``evals/markers.py``); no revision, no schema, no coverage rule. A review call
    that raises is skipped, as a pipeline without feedback does.
(c) ``controlled_chain`` — the real delivery graph.

Each returns a ``RunOutcome``: the status and the few facts the scorer's hard rules need, plus cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from reins.policies.text.redaction import redact
from reins.runtime.contracts import SERVED_PREFIX, invoke_text, merge_metrics, metrics_totals
from reins.runtime.llm.failures import safe_error
from reins.runtime.llm.models import ModelSet
from reins.runtime.resources import ResourceError, ResourceResolver
from reins.evals.contracts import fixed_review_contract
from reins.evals.markers import BLOCKING, fixed_status, read_marker, review_verdict, single_agent_reading
from reins.evals.prompts import fixed_plan_messages, fixed_review_messages, fixed_tasks_messages, single_agent_messages
from reins.runtime.execution.steps import failure_code
from reins.nodes.delivery.prompts import CONTEXT_DOCUMENTS, FALLBACK_DOCUMENTS
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS

REVIEWER_ROLES = DEFAULT_REVIEWERS.roles

UNREADABLE = "unreadable"  # the baseline's text carried no recognisable status
REQUIREMENT_LIMIT = 60_000


@dataclass(frozen=True)
class RunOutcome:
    status: str
    completed_reviews: int
    blocker_seen: bool  # one of the run's own completed reviews reported a blocker
    revised: bool
    calls: int
    repair_calls: int
    tokens: int
    elapsed_ms: int
    error: str | None = None
    failure: str | None = None  # where and how a failed run stopped, e.g. "delegation: no_tool_call"
    retries: int = 0  # calls repeated after a transient provider failure (counted in ``calls`` too)
    reasks: int = 0  # refused manager turns asked again (the controlled chain only)
    # The model calls whose failure decided the run, as (contract, code): the call a failed run stopped
    # at (code ``refused`` for a manager turn refused past the re-ask budget) and every review that
    # did not complete. Empty when every call the status depends on answered.
    stops: tuple[tuple[str, str], ...] = ()
    served: Mapping[str, int] = field(default_factory=dict)  # model label → calls it answered
    decisions: Mapping[str, Any] | None = None  # what the chain's policies read and decided (evals/records.py)


def _cost(metrics: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Every request made to a model: business, encoder, repair and escalated calls and their retries;
    and which model answered how many."""
    totals = metrics_totals(metrics)
    return {
        "calls": totals["business_calls"] + totals["encoder_calls"] + totals["repair_calls"] + totals["retries"]
        + totals.get("escalations", 0),
        "served": {key.removeprefix(SERVED_PREFIX): count for key, count in totals.items()
                   if key.startswith(SERVED_PREFIX) and count},
        "repair_calls": totals["repair_calls"],
        "tokens": totals["input_tokens"] + totals["output_tokens"],
        "retries": totals["retries"],
    }


def load_input(payload: Mapping[str, str], resolver: ResourceResolver) -> tuple[str, list[dict[str, str]]]:
    """The requirement (redacted, as the chain does) and the same context documents the chain loads."""
    blocks: list[dict[str, str]] = []
    if payload.get("requirement_uri"):
        uri = payload["requirement_uri"]
        text = resolver.read(uri).text
        try:
            extra = resolver.read(uri.rsplit("/", 1)[0] + "/context.md").text
            blocks.append({"kind": "scenario_context", "title": "Scenario context", "markdown": redact(extra, 12_000)})
        except ResourceError:
            pass
    else:
        text = payload.get("requirement") or ""
    for kind, title, uri in CONTEXT_DOCUMENTS:
        try:
            markdown = resolver.read(uri).text
        except ResourceError:
            markdown = FALLBACK_DOCUMENTS[title]
        blocks.append({"kind": kind, "title": title, "markdown": markdown})
    return redact(text.strip(), REQUIREMENT_LIMIT), blocks


def run_single_agent(payload: Mapping[str, str], models: ModelSet, resolver: ResourceResolver) -> RunOutcome:
    started = time.perf_counter()
    metrics: dict = {}
    try:
        requirement, blocks = load_input(payload, resolver)
        result = invoke_text("eval.single_agent", single_agent_messages(requirement, blocks), models)
        metrics = result.metrics
    except Exception as error:  # the one call failed: nothing to read
        return RunOutcome("failed", 0, False, False, **_cost(getattr(error, "metrics", {}) or metrics),
                          elapsed_ms=_ms(started), error=safe_error(error, 200),
                          failure=f"single call: {failure_code(error)}", stops=(("eval.single_agent", failure_code(error)),))
    reading = single_agent_reading(result.text)
    completed = sum(1 for verdict in reading["verdicts"].values() if verdict is not None)
    return RunOutcome(reading["status"] or UNREADABLE, completed, bool(reading["blocker_seen"]), False,
                      **_cost(metrics), elapsed_ms=_ms(started))


def run_fixed_multi_agent(payload: Mapping[str, str], models: ModelSet, resolver: ResourceResolver) -> RunOutcome:
    started = time.perf_counter()
    metrics: dict = {}
    stage = "plan"
    try:
        requirement, blocks = load_input(payload, resolver)
        plan = invoke_text("eval.fixed_plan", fixed_plan_messages(requirement, blocks), models)
        metrics = merge_metrics(metrics, plan.metrics)
        stage = "tasks"
        tasks = invoke_text("eval.fixed_tasks", fixed_tasks_messages(requirement, blocks, plan.text), models)
        metrics = merge_metrics(metrics, tasks.metrics)
    except Exception as error:  # no plan or no tasks: the pipeline cannot go on
        metrics = merge_metrics(metrics, getattr(error, "metrics", {}))
        return RunOutcome("failed", 0, False, False, **_cost(metrics), elapsed_ms=_ms(started),
                          error=safe_error(error, 200), failure=f"{stage}: {failure_code(error)}",
                          stops=((f"eval.fixed_{stage}", failure_code(error)),))

    skipped: dict[str, str] = {}

    def review(role: str) -> tuple[str | None, dict]:
        messages = fixed_review_messages(role, requirement, blocks, plan.text, tasks.text)
        try:
            served = models.serving("reviewer", by=DEFAULT_REVIEWERS.of_role(role).model_role)
            result = invoke_text(fixed_review_contract(role), messages, served)
            return result.text, result.metrics
        except Exception as error:  # skipped: this pipeline has no rule for a missing review
            skipped[role] = failure_code(error)
            return None, getattr(error, "metrics", {})

    with ThreadPoolExecutor(max_workers=len(REVIEWER_ROLES), thread_name_prefix="fixed-review") as pool:
        answers = dict(zip(REVIEWER_ROLES, pool.map(review, REVIEWER_ROLES), strict=True))
    verdicts = {role: review_verdict(role, text) for role, (text, _) in answers.items()}
    for _, review_metrics in answers.values():
        metrics = merge_metrics(metrics, review_metrics)
    status = fixed_status(read_marker(plan.text, "READINESS"), verdicts)
    completed = sum(1 for verdict in verdicts.values() if verdict is not None)
    blocker = any(verdicts[role] == BLOCKING[role] for role in REVIEWER_ROLES)
    stops = tuple((f"eval.fixed_{role}_review", skipped[role]) for role in REVIEWER_ROLES if role in skipped)
    return RunOutcome(status, completed, blocker, False, **_cost(metrics), elapsed_ms=_ms(started), stops=stops)


def run_controlled_chain(
    payload: Mapping[str, str], models: ModelSet, resolver: ResourceResolver, *, review_timeout_s: float | None = None
) -> RunOutcome:
    from langgraph.checkpoint.memory import InMemorySaver

    from reins.evals.records import decision_inputs
    from reins.graphs.delivery_chain import build_graph  # the evaluation is an application: it may use the graph

    started = time.perf_counter()
    config = {"configurable": {"thread_id": "eval"}}  # checkpointed to read what the decisions were given
    try:
        graph = build_graph(models=models, resolver=resolver, review_timeout_s=review_timeout_s,
                            checkpointer=InMemorySaver())
        out = graph.invoke(dict(payload), config)
        decisions = decision_inputs(graph.get_state(config).values)
    except Exception as error:  # the graph itself should never raise; if it does, the run failed
        return RunOutcome("failed", 0, False, False, 0, 0, 0, _ms(started), error=safe_error(error, 200),
                          failure="graph: raised", stops=(("graph", "raised"),))
    bundle = out.get("review_bundle") or {}
    completed = sum(1 for outcome in (bundle.get("coverage") or {}).values() if outcome == "completed")
    blocker = any(DEFAULT_REVIEWERS.of_role(entry["role"]).levels.get(entry.get("verdict")) == "blocker"
                  for entry in bundle.get("completed") or [] if entry.get("role") in DEFAULT_REVIEWERS.roles)
    revised = bool((out.get("revision") or {}).get("outcomes"))
    status = str(out.get("run_status") or "failed")
    metrics = out.get("metrics") or {}
    return RunOutcome(status, completed, blocker, revised, **_cost(metrics.get("per_contract") or {}),
                      elapsed_ms=_ms(started), failure=chain_failure(out) if status == "failed" else None,
                      reasks=int(metrics.get("manager_reasks") or 0), stops=chain_stops(out), decisions=decisions)


def chain_failure(out: Mapping[str, Any]) -> str:
    """Where a failed chain run stopped, from its trace: the fail-closed reason (``stage: code``), or
    the review group when every reviewer failed."""
    closed = [entry["summary"] for entry in out.get("trace") or [] if entry.get("step") == "fail-closed"]
    return closed[-1] if closed else "review group: all_reviews_failed"


# The chain's fail-closed stages that are one model call, and the contract that call is.
STAGE_CONTRACTS: Mapping[str, str] = {
    "supervisor-pre-decision": "delivery.supervisor_pre",
    "manager": "delivery.manager",
    "delegation": "delivery.manager",  # a turn refused past the re-ask budget
    "delegate-plan": "delivery.plan",
    "delegate-task": "delivery.tasks",
}


def chain_stops(out: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The model calls whose failure decided a chain run (``RunOutcome.stops``): the call a failed run
    stopped at, then every review that did not complete."""
    stops: list[tuple[str, str]] = []
    failure = out.get("failure") or {}
    contract = STAGE_CONTRACTS.get(str(failure.get("stage") or ""))
    if contract:
        stops.append((contract, "refused" if failure["stage"] == "delegation" else call_outcome(failure)))
    coverage = (out.get("review_bundle") or {}).get("coverage") or {}
    stops += [(DEFAULT_REVIEWERS.of_role(role).contract, outcome) for role, outcome in coverage.items()
              if outcome != "completed" and role in DEFAULT_REVIEWERS.roles]
    return tuple(stops)


def call_outcome(failure: Mapping[str, Any]) -> str:
    """A failed call as contract_failure | timeout | execution_failed: the supervisor and the manager
    fail closed with their own codes, so their cause (``reins.runtime.llm.failures.failure_cause``) tells. A stop
    without a cause is a rule's (e.g. ``reviewer_roles_inexact``): its code is kept."""
    code = str(failure.get("code") or "")
    cause = str(failure.get("cause") or "")
    if code in ("contract_failure", "timeout", "execution_failed") or not cause:
        return code
    if cause.startswith("invalid output after repair"):
        return "contract_failure"
    return "timeout" if cause == "timeout" else "execution_failed"


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


Runner = Callable[[Mapping[str, str], ModelSet, ResourceResolver], RunOutcome]
RUNNERS: Mapping[str, Runner] = {
    "single_agent": run_single_agent,
    "fixed_multi_agent": run_fixed_multi_agent,
    "controlled_chain": run_controlled_chain,
    "controlled_chain_fallback": run_controlled_chain,  # its fallback models come with the ModelSet
    "controlled_chain_escalation": run_controlled_chain,  # and its escalation models too
}


def run_baseline(name: str, payload: Mapping[str, str], models: ModelSet, resolver: ResourceResolver | None = None,
                 **options: Any) -> RunOutcome:
    return RUNNERS[name](payload, models, resolver or ResourceResolver(), **options)
