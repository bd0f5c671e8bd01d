"""ScriptedModel: a chat model that answers from a script keyed by contract name.

For tests and for anyone testing their own prompts::

    model = ScriptedModel({
        "tasklist.planning_decision": [{"decision": {...}, "strategy": {...}}],
        "delivery.manager": [AIMessage(content="", tool_calls=[...])],
        "delivery.risk_review": [TimeoutError("slow")],
        "assistant.answer": lambda messages: {"summary": "...", "evidence": [], "verdict": "ok"},
    })

A list is consumed in order; a callable receives the messages and returns a response. A response is
a dict (structured output), a str (free text), an ``AIMessage`` (e.g. tool calls) or an exception
instance to raise. Every call is recorded in ``.calls``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import ConfigDict, PrivateAttr

from reins.runtime.standins.fake_base import ModelCall, StandInChatModel


class UnscriptedCallError(LookupError):
    """The model was asked for a contract that its script does not cover (or has run out of)."""


ScriptedCall = ModelCall  # what `.calls` records: contract, role, structured, tool_names, messages


class ScriptedModel(StandInChatModel):
    """A chat model that answers Reins contracts from a script, keyed by contract name: for tests of
    your own prompts and policies, with no network.

    Each entry is a list consumed in order or a callable given the exact messages; a response is a
    dict (structured output), a str (free text), an ``AIMessage`` (tool calls) or an exception
    instance to raise. A contract the script does not cover (or has run out of) raises
    ``UnscriptedCallError``, so a test also pins which calls happen; ``calls``, ``count(contract)``
    and ``contracts_called()`` tell what was asked.

    Example: ``ScriptedModel({"delivery.supervisor_pre": [{"branch": "blocked", "boundary_evidence": ["x"], "next_step": "Stop.", "reason": "A boundary."}]})``
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _script: dict[str, Any] = PrivateAttr()
    _positions: dict[str, int] = PrivateAttr(default_factory=dict)
    _calls: list[ScriptedCall] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, responses: dict[str, list[Any] | Callable[[list[BaseMessage]], Any]], **kwargs: Any):
        super().__init__(**kwargs)
        for contract, entry in responses.items():
            if not (callable(entry) or isinstance(entry, (list, tuple))):
                raise TypeError(
                    f"ScriptedModel script for {contract!r} must be a list of responses or a callable, "
                    f"not {type(entry).__name__}"
                )
        self._script = dict(responses)

    @property
    def _llm_type(self) -> str:
        return "reins-scripted"

    @property
    def calls(self) -> list[ScriptedCall]:
        return list(self._calls)

    def contracts_called(self) -> list[str]:
        return [call.contract for call in self._calls]

    def count(self, contract: str) -> int:
        return sum(1 for call in self._calls if call.contract == contract)

    def respond(self, call: ModelCall) -> Any:
        with self._lock:
            self._calls.append(call)
            if call.contract not in self._script:
                raise UnscriptedCallError(
                    f"ScriptedModel has no response for contract {call.contract!r}; "
                    f"scripted: {', '.join(sorted(self._script)) or 'none'}"
                )
            entry = self._script[call.contract]
            if callable(entry):
                response = entry
            else:
                position = self._positions.get(call.contract, 0)
                if position >= len(entry):
                    raise UnscriptedCallError(
                        f"ScriptedModel ran out of responses for contract {call.contract!r} "
                        f"after {len(entry)} call(s)"
                    )
                self._positions[call.contract] = position + 1
                response = entry[position]
        # Callables run outside the lock so concurrent calls (parallel reviewers) can meet at a barrier.
        return response(list(call.messages)) if callable(response) else response
