"""State of the assistant graph.

``messages`` is the conversation (short-term memory, trimmed to the window each turn); every other
key describes the current turn only and is reset when a turn starts. All values are plain data so
checkpoints stay strict-msgpack safe.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from runtime.contracts import merge_metrics


class AssistantInput(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class AssistantOutput(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    reply: str
    answer: dict[str, Any] | None
    intent: str | None
    intent_failed: bool  # the intent contract failed: the turn was answered as QA, unverified
    plan: dict[str, Any] | None
    records: list[dict[str, Any]]
    stop_reason: str | None
    check: dict[str, Any] | None
    pipeline: dict[str, Any] | None
    trace: list[str]
    metrics: Annotated[dict[str, dict[str, int]], merge_metrics]


class AssistantState(AssistantOutput, total=False):
    request: str
    conversation: list[dict[str, str]]  # the window before the current request: {role, text}
    recollections: list[str]
    steps_taken: int
    pending_call: dict[str, Any] | None
    draft: dict[str, Any] | None


def fresh_turn() -> dict[str, Any]:
    """The per-turn keys at the start of a turn (a checkpointed thread keeps the previous turn's)."""
    return {
        "reply": "",
        "answer": None,
        "intent": None,
        "intent_failed": False,
        "plan": None,
        "records": [],
        "stop_reason": None,
        "check": None,
        "pipeline": None,
        "trace": [],
        "request": "",
        "conversation": [],
        "recollections": [],
        "steps_taken": 0,
        "pending_call": None,
        "draft": None,
    }
