"""The rolling summary: when the window drops turns, ``assistant.summary`` folds them into a bounded
summary that later prompts show (a failure keeps the previous summary; the turn goes on)."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import AssistantDeps
from reins.nodes.assistant.prompts import summary_messages
from reins.nodes.assistant.state import Turn
from reins.runtime.execution.calls import Contract
from reins.runtime.execution.steps import attempt
from reins.schemas.assistant import AssistantSummary


def fold_dropped(
    previous: str, dropped: Sequence[Turn], runtime: Runtime[AssistantContext], deps: AssistantDeps
) -> Generator[Any, Any, tuple[str, str]]:
    """(the new summary, a note for the trace)."""
    if not dropped:
        return previous, ""
    outcome = yield from attempt(
        Contract("assistant.summary", AssistantSummary, summary_messages(previous, dropped),
                 deps.models_for(runtime), mode=deps.mode_for(runtime))
    )
    if not outcome.ok:
        return previous, f"summary not updated ({outcome.reason()})"
    return outcome.value.summary, "dropped turns summarised"
