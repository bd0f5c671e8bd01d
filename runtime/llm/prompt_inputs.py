"""A contract's prompt together with the structured inputs it was written from.

A prompt builder returns ``Prompt(messages, inputs)``: a list of messages like any other, which also
carries its inputs (the requirement, the plan, the findings … as values, not as text). While the
contract runs, its inputs are held here under an opaque handle, and each call's metadata carries the
handle beside the contract's name (``reins.runtime.llm.model_calls``): a real provider never sees metadata, a
trace sees only the handle (never prompt text: ``reins.policies.audit.tracing``), and a stand-in model resolves
it (``ModelCall.inputs``) instead of parsing the prompt's prose.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from langchain_core.messages import BaseMessage


class Prompt(list):
    """Messages (a ``list``) plus ``inputs``: the values the messages were rendered from."""

    def __init__(self, messages: Iterable[BaseMessage], inputs: Mapping[str, Any]):
        super().__init__(messages)
        self.inputs = dict(inputs)


class Tagged(str):
    """A piece of prompt text plus the inputs it was rendered from (a prompt assembled from pieces
    gathers them into its ``Prompt``)."""

    inputs: dict[str, Any]

    def __new__(cls, text: str, inputs: Mapping[str, Any]) -> Tagged:
        piece = super().__new__(cls, text)
        piece.inputs = dict(inputs)
        return piece


def inputs_of(messages: Iterable[BaseMessage]) -> Mapping[str, Any] | None:
    """The inputs a prompt carries; None for plain messages."""
    return messages.inputs if isinstance(messages, Prompt) else None


class HeldInputs:
    """A contract's inputs, resolvable by ``handle`` for as long as this object is alive (its
    caller keeps it for the duration of the contract's calls)."""

    __slots__ = ("handle", "inputs", "__weakref__")

    def __init__(self, inputs: Mapping[str, Any]):
        self.handle = f"inputs-{next(_HANDLES)}"
        self.inputs = MappingProxyType(dict(inputs))  # read-only: every responder sees the same values
        _HELD[self.handle] = self


_HANDLES = itertools.count(1)
_HELD: weakref.WeakValueDictionary[str, HeldInputs] = weakref.WeakValueDictionary()


def held_inputs(handle: object) -> Mapping[str, Any]:
    """The inputs held under ``handle``; empty for no handle or one no longer held."""
    held = _HELD.get(handle) if isinstance(handle, str) else None
    return held.inputs if held is not None else MappingProxyType({})
