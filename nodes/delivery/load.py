"""``load_context``: accept the input (or refuse it, with no model call) and load the run's context."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

import time
import uuid
from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from reins.policies.delivery.input import classify_delivery_input
from reins.policies.text.redaction import redact, was_redacted
from reins.runtime.execution.calls import OffLoop
from reins.runtime.resources import ResourceError, ResourceNotFound
from reins.runtime.execution.steps import recorded_step
from reins.nodes.delivery.common import DeliveryDeps, fail, progress
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.prompts import CONTEXT_DOCUMENTS, FALLBACK_DOCUMENTS
from reins.nodes.delivery.routing import after_load
from reins.nodes.delivery.state import AfterLoad, ContextBlock, DeliveryState, Governance

REQUIREMENT_LIMIT = 60_000
INPUT_REDACTED_WARNING = "A secret in the requirement was replaced with [redacted] before it was stored or sent to a model."


def _run_id(runtime: Runtime[DeliveryContext]) -> str:
    thread = runtime.execution_info.thread_id if runtime.execution_info else None
    return redact(str(thread), 64) if thread else uuid.uuid4().hex


@declare(acts=("file_read",), guards=("delivery_input",))
def load_context(
    state: DeliveryState, runtime: Runtime[DeliveryContext], *, deps: DeliveryDeps
) -> Generator[Any, Any, Command[AfterLoad]]:
    # Files are read (stat, symlinks resolved, opened) off the event loop under ainvoke.
    update = yield OffLoop(loaded, (state, runtime, deps))
    return Command(update=update, goto=after_load(update))


def loaded(state: DeliveryState, runtime: Runtime[DeliveryContext], deps: DeliveryDeps) -> DeliveryState:
    """The run's start and context, or the failure that refuses it."""
    run_id = state.get("run_id") or _run_id(runtime)
    base: DeliveryState = {"run_id": run_id, "started_at": time.time(), "manager_turns": 0}
    events = progress({"run_id": run_id})
    events.start("Delivery chain")
    with recorded_step(events, "load", "Load requirement and context") as step:
        decision = classify_delivery_input(state.get("requirement"), state.get("requirement_uri"))
        if decision.kind == "rejected":
            step.fail(f"input refused: {decision.code}")
            return {**base, "source_label": "refused input", **fail("load", decision.code, decision.reason)}
        blocks: list[ContextBlock] = []
        warnings: list[str] = []
        if was_redacted(state.get("requirement")):  # the input was redacted before it was stored
            warnings.append(INPUT_REDACTED_WARNING)
        try:
            resolver = deps.resolver_for(runtime)
            custom_root = resolver.governance_root is not None
        except ResourceError as error:
            step.fail("governance root refused")
            return {**base, "source_label": "refused input", **fail("load", "governance_root_invalid", str(error))}
        if decision.kind == "scenario":
            base_uri = f"demo://scenarios/{decision.scenario_id}"
            try:
                text = resolver.read(f"{base_uri}/requirement.md").text
            except ResourceError:
                step.fail("scenario not found")
                failed = fail("load", "scenario_not_found", "That scenario does not exist.")
                return {**base, "source_label": "unknown scenario", **failed}
            try:
                extra = resolver.read(f"{base_uri}/context.md").text
                blocks.append({"kind": "scenario_context", "title": "Scenario context", "markdown": redact(extra, 12_000)})
            except ResourceError:
                pass  # context.md is optional
            label = f"scenario {decision.scenario_id}"
        else:
            text, label = state["requirement"], "inline requirement"
        origins: dict[str, list[str]] = {"custom": [], "bundled": []}
        for kind, title, uri in CONTEXT_DOCUMENTS:
            try:
                resource = resolver.read(uri)
                markdown = resource.text
                origins["custom" if resource.origin == "custom" else "bundled"].append(title)
            except ResourceError as error:
                if custom_root and not isinstance(error, ResourceNotFound):
                    # A custom document that breaks a sandbox rule is refused, never replaced quietly.
                    step.fail(f"{title} refused")
                    failed = fail("load", "governance_document_refused", f"{title}: {error}")
                    return {**base, "source_label": "refused input", **failed}
                markdown = FALLBACK_DOCUMENTS[title]
                warnings.append(f"{title} was not found; a built-in summary was used.")
            blocks.append({"kind": kind, "title": title, "markdown": markdown})
        governance = Governance(set="custom" if origins["custom"] else "bundled", **origins)
        requirement = redact(text.strip(), REQUIREMENT_LIMIT)
        step.summary = f"{label}: {len(requirement)} characters, {len(blocks)} context block(s)"
    return {
        **base,
        "source_label": label,
        "requirement_text": requirement,
        "context_blocks": blocks,
        "warnings": warnings,
        "governance": governance,
        "trace": [step.trace()],
    }
