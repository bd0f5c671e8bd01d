"""A contract's prompt together with the structured inputs it was written from.

A prompt builder returns ``Prompt(messages, inputs)``: a list of messages like any other, which also
carries its inputs (the requirement, the plan, the findings … as values, not as text). The contract
runtime sends them in each call's metadata beside the contract's name (``runtime.model_calls``), where
a real provider never sees them and a stand-in model reads them (``ModelCall.inputs``) instead of
parsing the prompt's prose.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
