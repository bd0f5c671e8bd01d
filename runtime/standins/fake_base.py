"""What the two stand-in chat models share: the call label, tool binding and JSON structured output.

Contracts are named in the call's LangChain metadata (``reins_contract`` / ``reins_role``), and their
structured inputs travel there too (``reins_inputs``: a handle, ``reins.runtime.llm.prompt_inputs``), so a real
provider never sees them in its payload, while tracing and these stand-ins do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda, RunnableMap
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from reins.policies.text.json_limits import MAX_JSON_DEPTH, JsonLimitError, check_json_value, parse_json
from reins.runtime.llm.prompt_inputs import held_inputs

CONTRACT_KEY = "reins_contract"
ROLE_KEY = "reins_role"
INPUTS_KEY = "reins_inputs"
UNLABELLED = "unlabelled"


@dataclass(frozen=True)
class ModelCall:
    """One call as a stand-in model sees it: which contract and role, how, with which messages."""

    contract: str
    role: str
    structured: bool
    tool_names: tuple[str, ...]
    messages: tuple[BaseMessage, ...]
    tool_choice: Any = None  # as the request would carry it (None: not sent)
    parallel_tool_calls: bool | None = None
    schema: Any = None  # a structured call's JSON schema (or class), as the request carries it
    inputs: Mapping[str, Any] = field(default_factory=dict)  # the contract's structured inputs (read-only)


def call_label(run_manager: Any, kwargs: dict[str, Any], messages: Sequence[BaseMessage] = ()) -> ModelCall:
    metadata = getattr(run_manager, "metadata", None) or {}
    tools = kwargs.get("tools") or []
    names = tuple(t.get("function", {}).get("name", "") for t in tools if isinstance(t, dict))
    return ModelCall(
        contract=str(metadata.get(CONTRACT_KEY) or UNLABELLED),
        role=str(metadata.get(ROLE_KEY) or UNLABELLED),
        structured=bool(kwargs.get("reins_structured")),
        tool_names=names,
        messages=tuple(messages),
        tool_choice=kwargs.get("tool_choice"),
        parallel_tool_calls=kwargs.get("parallel_tool_calls"),
        schema=kwargs.get("reins_schema"),
        inputs=held_inputs(metadata.get(INPUTS_KEY)),
    )


def to_ai_message(response: Any) -> AIMessage:
    """Turn a scripted / offline response (dict, str or AIMessage) into an AIMessage."""
    if isinstance(response, AIMessage):
        return response
    if isinstance(response, str):
        return AIMessage(content=response)
    if isinstance(response, (dict, list)):
        try:
            check_json_value(response)
        except JsonLimitError:
            # Deeper than any answer may be (and than json.dumps can write): sent as text just as
            # deep, which the parse step refuses like a real model's.
            return AIMessage(content="[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
        return AIMessage(content=json.dumps(response, ensure_ascii=False))
    raise TypeError(f"unsupported response type {type(response).__name__}")


def _parse_json_output(message: AIMessage) -> Any:
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    return parse_json(text)  # within the size and depth limits (a JsonLimitError is a ValueError)


class StandInBindings(BaseChatModel):
    """How every stand-in model (scripted, offline, the evaluation's perturbing wrapper) takes tools
    and a structured-output request: both travel as call keyword arguments, so the model's
    ``_generate`` sees them."""

    def _structured_request(self, schema: dict[str, Any] | type, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Extra call keyword arguments a structured request carries: the schema, so a stand-in can
        read the shape it must answer in (a wrapper passes it on to its inner model)."""
        return {"reins_schema": schema}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        bound = self.bind(reins_structured=True, **self._structured_request(schema, kwargs))

        def _parse(message: AIMessage) -> Any:
            # Like the provider integrations: a pydantic class gives an instance, a JSON schema a dict.
            data = _parse_json_output(message)
            if isinstance(schema, type) and issubclass(schema, BaseModel):
                return schema.model_validate(data)
            return data

        if not include_raw:
            return bound | _on_loop(_parse)

        def _with_raw(message: AIMessage) -> dict[str, Any]:
            try:
                return {"raw": message, "parsed": _parse(message), "parsing_error": None}
            except (ValueError, TypeError) as error:
                return {"raw": message, "parsed": None, "parsing_error": error}

        return bound | _on_loop(_with_raw)


def _listens(run_manager: Any) -> bool:
    """Someone streams this call (LangGraph's messages stream, ``astream_events``): the same test
    LangChain makes before it streams a provider's answer."""
    from reins.runtime.llm.langchain_private import is_streaming_handler

    handlers = getattr(run_manager, "handlers", None) or ()
    return any(is_streaming_handler(handler) for handler in handlers)


_WORDS = re.compile(r"\S+\s*|\s+")


def stream_chunks(message: AIMessage) -> list[ChatGenerationChunk]:
    """``message`` as the chunks a streaming provider sends: its text a word at a time, then one last
    chunk with its tool calls, usage and response metadata (merged, they give ``message`` back)."""
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    words = _WORDS.findall(text)
    calls = [{"name": c["name"], "args": json.dumps(c["args"]), "id": c.get("id"), "index": i, "type": "tool_call_chunk"}
             for i, c in enumerate(message.tool_calls)]
    chunks = [AIMessageChunk(content=word, id=message.id) for word in words[:-1]]
    chunks.append(AIMessageChunk(
        content=words[-1] if words else "", id=message.id, tool_call_chunks=calls,
        usage_metadata=message.usage_metadata, response_metadata=dict(message.response_metadata),
        additional_kwargs=dict(message.additional_kwargs), chunk_position="last",
    ))
    return [ChatGenerationChunk(message=chunk) for chunk in chunks]


def _on_loop(parse: Callable[[AIMessage], Any]) -> RunnableLambda:
    """The parse step of a structured call, run on the event loop under ``ainvoke``: a sync-only
    ``RunnableLambda`` would hand each parse to an executor thread."""

    async def aparse(message: AIMessage) -> Any:
        return parse(message)

    return RunnableLambda(parse, afunc=aparse)


class StandInChatModel(StandInBindings):
    """Base for rule-based and scripted chat models: subclasses implement ``respond``."""

    def respond(self, call: ModelCall) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        result = self._answer(messages, run_manager, kwargs)
        if _listens(run_manager):  # written a few words at a time, as a streaming provider sends it
            for chunk in stream_chunks(result.generations[0].message):
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
        return result

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Answers are computed by rules in microseconds: no executor thread (the base class would
        # run ``_generate`` in one).
        result = self._answer(messages, run_manager, kwargs)
        if _listens(run_manager):
            for chunk in stream_chunks(result.generations[0].message):
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
        return result

    def _answer(self, messages: list[BaseMessage], run_manager: Any, kwargs: dict[str, Any]) -> ChatResult:
        response = self.respond(call_label(run_manager, kwargs, messages))
        if isinstance(response, BaseException):
            raise response
        message = to_ai_message(response)
        if message is response:  # never mutate a scripted message: a script may reuse it
            message = message.model_copy(deep=True)
        if message.usage_metadata is None:
            # Rough, deterministic token counts so metrics have something honest to add up.
            prompt_tokens = sum(len(str(m.content)) for m in messages) // 4
            output_tokens = len(str(message.content)) // 4
            message.usage_metadata = {
                "input_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
            }
        return ChatResult(generations=[ChatGeneration(message=message)])


__all__ = ["ModelCall", "StandInBindings", "StandInChatModel", "call_label", "RunnableMap", "to_ai_message", "CONTRACT_KEY", "ROLE_KEY", "INPUTS_KEY"]
