"""The responder registry behind OfflineModel."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import ConfigDict, Field

from reins.policies.text.json_limits import parse_json
from reins.policies.text.redaction import truncate
from reins.runtime.standins.fake_base import ModelCall, StandInChatModel
from reins.runtime.llm.messages import message_text

Responder = Callable[["OfflineRequest"], Any]
_RESPONDERS: dict[str, Responder] = {}


def responder(contract: str) -> Callable[[Responder], Responder]:
    """Register the rule-based answer for one contract name."""

    def register(fn: Responder) -> Responder:
        if contract in _RESPONDERS:
            raise ValueError(f"an offline responder for {contract!r} is already registered")
        _RESPONDERS[contract] = fn
        return fn

    return register


def registered_contracts() -> list[str]:
    return sorted(_RESPONDERS)


@dataclass(frozen=True)
class OfflineRequest(ModelCall):
    """One call as a responder sees it: the model call — its structured ``inputs`` above all — plus
    helpers to read the prompt's text, for prompts that carry no inputs (the evaluation's baselines)."""

    @property
    def system(self) -> str:
        return "\n".join(_text(m) for m in self.messages if isinstance(m, SystemMessage))

    @property
    def user(self) -> str:
        """The last human message (the current request)."""
        humans = [m for m in self.messages if isinstance(m, HumanMessage)]
        return _text(humans[-1]) if humans else ""

    @property
    def text(self) -> str:
        return "\n".join(_text(m) for m in self.messages)

    def block(self, name: str, default: str = "") -> str:
        """Content of the last ``<name>…</name>`` block in the prompt (prompts tag their inputs)."""
        matches = re.findall(rf"<{re.escape(name)}>\n?(.*?)\n?</{re.escape(name)}>", self.text, re.S)
        return matches[-1] if matches else default

    def json_block(self, name: str, default: Any = None) -> Any:
        raw = self.block(name)
        if not raw.strip():
            return default
        try:
            return parse_json(raw)
        except ValueError:  # invalid, or over the JSON limits
            return default


def one_line(text: object, limit: int) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` characters with an ellipsis."""
    return truncate(" ".join(str(text).split()), limit)


def _text(message: BaseMessage) -> str:
    return message_text(message, "\n")


class OfflineModel(StandInChatModel):
    """Deterministic rule-based chat model; see the package docstring.

    Serves every role of every graph with no network and no key: plausible, never intelligent.
    ``responders`` adds or replaces the rule of a contract (a function of the call's request).

    Example: ``build_delivery_chain(models=OfflineModel(responders={"delivery.privacy_review": privacy_rule}))``
    """

    model_config = ConfigDict(populate_by_name=True)

    # ``model=`` is accepted like ChatOpenAI's; the name only labels traces, it selects nothing.
    model_name: str = Field(default="reins-offline", alias="model")
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    stop: list[str] | None = None
    max_retries: int | None = None

    @property
    def _llm_type(self) -> str:
        return "reins-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "reins"
        params["ls_model_name"] = kwargs.get("model", self.model_name)
        return params

    # Your own rules for contracts of your own (e.g. a reviewer you added), by contract name; they
    # take precedence over the built-in ones for this model only.
    responders: dict[str, Any] = Field(default_factory=dict, exclude=True)

    def respond(self, call: ModelCall) -> Any:
        request = OfflineRequest(**vars(call))
        handler = self.responders.get(call.contract) or _RESPONDERS.get(call.contract)
        if call.role == "encoder" or handler is None:
            return _generic_answer(request)
        return handler(request)


def _generic_answer(request: OfflineRequest) -> Any:
    """Encoder calls pass the (JSON) draft through; unlabelled calls say what this model is."""
    if request.structured:
        # Two-step encoding: the draft already is JSON; pass it through for the schema check.
        for candidate in (request.block("draft"), request.user):
            try:
                return parse_json(candidate)
            except ValueError:  # invalid, or over the JSON limits
                continue
        return {}
    return "I am Reins' offline rule-based stand-in; configure REINS_MODEL to use a language model."
