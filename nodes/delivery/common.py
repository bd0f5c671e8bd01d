"""What the delivery nodes share: their dependencies, progress, trace records, failures and artifact
records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from reins.policies.models.deadlines import contract_deadline_s
from reins.policies.delivery.delegation import DEFAULT_POLICY, PLAN_TOOL, TASK_TOOL, DelegationPolicy
from reins.policies.text.redaction import redact, redact_mapping
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers
from reins.runtime.config.context import resolve_contract_mode, resolve_models
from reins.runtime.llm.failures import failure_cause
from reins.runtime.llm.models import ModelSet
from reins.runtime.execution.progress import Progress
from reins.runtime.tools.registry import ScopedTools, SubagentToolDefinition
from reins.runtime.resources import ResourceResolver
from reins.runtime.execution.steps import Attempt, failure_label, trace_record
from reins.schemas.trace import TraceRecord
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.state import ArtifactRecord, DeliveryState, Failure, ToolResultView

WORKFLOW = "delivery-chain"
MARKDOWN_LIMIT = 14_000


@dataclass(frozen=True)
class DeliveryDeps:
    """Fixed at build time; per-run overrides come from the LangGraph runtime context."""

    models: ModelSet | None
    tools: ScopedTools
    policy: DelegationPolicy = DEFAULT_POLICY
    resolver: ResourceResolver = ResourceResolver()
    polish: bool = False
    review_timeout_s: float | None = None
    reviewers: Reviewers = DEFAULT_REVIEWERS

    def __post_init__(self) -> None:
        # Checked when the graph is built, before anything runs.
        if sorted(self.tools.names) != sorted((PLAN_TOOL, TASK_TOOL, *self.reviewers.tools)):
            raise ValueError("the manager's scope must hold exactly the plan, task and reviewer sub-agent tools")
        for tool in (PLAN_TOOL, TASK_TOOL):
            self.definition(tool)

    @cached_property
    def manager_tools(self) -> dict[str, BaseTool]:
        """The sub-agent tools a manager turn may be offered, by name."""
        return {tool.name: tool for tool in self.tools.langchain_tools()}

    def resolver_for(self, runtime: Runtime[DeliveryContext] | None) -> ResourceResolver:
        """The resolver for this run: the context's governance root, if any, replaces the default."""
        context = context_of(runtime)
        return self.resolver.with_governance_root(context.governance_root if context else None)

    def models_for(self, runtime: Runtime[DeliveryContext] | None) -> ModelSet:
        return resolve_models(context_of(runtime), self.models)

    def mode_for(self, runtime: Runtime[DeliveryContext] | None) -> str:
        return resolve_contract_mode(context_of(runtime))

    def definition(self, tool: str) -> SubagentToolDefinition:
        registered = self.tools.get(tool)
        if registered is None or registered.subagent is None:
            raise LookupError(f"sub-agent {tool} is not registered in scope {self.tools.scope}")
        return registered.subagent

    def polish_enabled(self, runtime: Runtime[DeliveryContext] | None) -> bool:
        context = context_of(runtime)
        wanted = context.polish if context else None
        return self.polish if wanted is None else bool(wanted)

    def review_timeout(self, runtime: Runtime[DeliveryContext] | None, models: ModelSet) -> float:
        """One review's deadline: the run's or the builder's, else from the reviewer role's policy
        (``models`` as the reviewer's ``model_role`` serves it)."""
        context = context_of(runtime)
        wanted = context.review_timeout_s if context else None
        if wanted:
            return float(wanted)
        if self.review_timeout_s:
            return float(self.review_timeout_s)
        policy = models.policy("reviewer")
        # the business call and its one repair, each with the role's retries and their backoff
        return contract_deadline_s(policy.timeout_s, policy.retries, policy.backoff_initial_s)


def context_of(runtime: Runtime[DeliveryContext] | None) -> DeliveryContext | None:
    """The run's context; None when the caller passed none (then the builder's settings apply)."""
    return runtime.context if runtime is not None else None


def progress(state: Mapping[str, Any]) -> Progress:
    return Progress(WORKFLOW, state.get("run_id") or "unknown")


def trace(step: str, summary: str) -> list[TraceRecord]:
    """A trace entry that is not a progress step's summary (those come from ``recorded_step``)."""
    return [trace_record(step, summary)]


def fail(stage: str, code: str, message: str, error: BaseException | None = None) -> DeliveryState:
    """A state update that makes the run fail closed with a safe, static reason; with the ``error``
    that caused it, its redacted cause class (``connection refused``, ``HTTP 401``, …)."""
    failure = Failure(stage=stage, code=code, message=redact(message, 300))
    if error is not None:
        failure["cause"] = failure_cause(error)
    return {"failure": failure, "trace": trace(stage, f"failed closed: {code}")}


def call_failed(stage: str, code: str, message: str, outcome: Attempt) -> DeliveryState:
    """A failed model call that stops the run: ``fail``, and a trace entry naming the failure (its
    code and type, never the provider's message)."""
    failed = fail(stage, code, message, outcome.error)
    return {**failed, "trace": [*failed["trace"], *trace(stage, failure_label(outcome.error))]}


def clean(value: Any) -> Any:
    """Validated model output as stored data: every string redacted (a model may echo a secret)."""
    return redact_mapping(value, MARKDOWN_LIMIT)


def artifact_record(artifact_id: str, revision: int, value: Mapping[str, Any], result: ToolResultView) -> ArtifactRecord:
    return ArtifactRecord(artifact_id=artifact_id, revision=revision, value=dict(value), result=result)


def without_markdown(value: Mapping[str, Any]) -> dict[str, Any]:
    """An artifact as the next model sees it: validated fields, no internal ids, no long markdown."""
    return {k: v for k, v in value.items() if k != "markdown"}


def artifact_id(kind: str, run_id: str) -> str:
    """Stable per run and kind (a revision keeps it); derived, so no user text ends up in an id."""
    import hashlib

    return f"{kind}-{hashlib.sha256(run_id.encode()).hexdigest()[:10]}"


def pending_note(state: Mapping[str, Any], tool: str) -> str:
    for call in state.get("pending_calls", []):
        if call.get("name") == tool:
            return redact((call.get("args") or {}).get("note") or "", 200)
    return ""
