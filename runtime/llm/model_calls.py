"""One model call of a contract: labels, the role's policy bound on the request, retries, fallbacks
and metering (``reins.runtime.contracts`` runs the contract algorithm on top of it).

A call goes to the role's model and, when its provider failure is final, to the role's fallbacks in
order (``reins.policies.models.fallback``); each model gets its retries on retryable failures (``reins.policies.models.retry``,
``Retry-After`` honoured within the deadline). Every call is counted (``_Meter``): business, encoder
and repair calls, retries, fallbacks, failed calls, tokens, latency and which model answered. Bound
runnables are memoised per model set, role, model, schema or tools and options.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import httpx
import openai
from langchain_core.messages import AIMessage, BaseMessage, message_chunk_to_message
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.constants import TAG_NOSTREAM
from pydantic import BaseModel

from reins.policies.models.fallback import skips_rest_of_run
from reins.policies.models.provider_schema import provider_schema
from reins.policies.models.retry import backoff_s, retry_after_s, retry_wait_s
from reins.policies.models.runaway_text import runaway
from reins.policies.models.second_attempt import repair_output_bound
from reins.policies.models.tool_choice import structured_tool_choice
from reins.runtime.execution.deadline import remaining_s
from reins.runtime.standins.fake_base import CONTRACT_KEY, INPUTS_KEY, ROLE_KEY
from reins.runtime.llm.failures import TIMEOUT_ERRORS, ContractTimeout, failure_cause, falls_back_after, is_retryable
from reins.runtime.llm.fallback_notes import MISSING_MODELS, announce_fallback
from reins.runtime.llm.messages import message_text
from reins.runtime.llm.langchain_private import current_config
from reins.runtime.llm.models import ModelSet
from reins.runtime.llm.prompt_inputs import HeldInputs
from reins.runtime.llm.role_settings import with_role_policy
from reins.runtime.execution.run_ledger import BudgetCapReached, ledgered

MODEL_KEY = "reins_model"  # the label of the model a call went to, in the call's trace metadata


# ---------------------------------------------------------------------------------------- metrics

# ``retries``: extra attempts of a call after a transient provider failure (each is one more request);
# ``fallbacks``: calls moved to the role's next model after a final provider failure;
# ``failed_calls``: calls that got no answer from any model (each also counts as its kind's call).
# Besides these, ``model:<label>`` counts the calls each model answered (``models_served`` reads them).
METRIC_FIELDS = (
    "business_calls", "encoder_calls", "repair_calls", "retries", "fallbacks", "failed_calls", "input_tokens",
    "output_tokens",
    "latency_ms",
)
SERVED_PREFIX = "model:"


def empty_metrics(contract: str) -> dict[str, dict[str, int]]:
    return {contract: dict.fromkeys(METRIC_FIELDS, 0)}


def merge_metrics(left: Mapping[str, Mapping[str, int]] | None, right: Mapping[str, Mapping[str, int]] | None) -> dict:
    """Add two per-contract metric maps (a LangGraph reducer for the ``metrics`` state key)."""
    merged: dict[str, dict[str, int]] = {k: dict(v) for k, v in (left or {}).items()}
    for contract, values in (right or {}).items():
        slot = merged.setdefault(contract, dict.fromkeys(METRIC_FIELDS, 0))
        for key, value in values.items():
            slot[key] = slot.get(key, 0) + int(value)
    return merged


def metrics_totals(metrics: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    totals = dict.fromkeys(METRIC_FIELDS, 0)
    for values in metrics.values():
        for key, value in values.items():
            totals[key] = totals.get(key, 0) + int(value)
    return totals


@dataclass
class _Meter:
    contract: str
    values: dict[str, int] = field(default_factory=lambda: dict.fromkeys(METRIC_FIELDS, 0))

    def count(self, kind: str, message: AIMessage | None, started: float) -> None:
        self.values[kind] += 1
        self.values["latency_ms"] += int((time.perf_counter() - started) * 1000)
        usage = getattr(message, "usage_metadata", None) or {}
        self.values["input_tokens"] += int(usage.get("input_tokens", 0) or 0)
        self.values["output_tokens"] += int(usage.get("output_tokens", 0) or 0)

    def served(self, label: str) -> None:
        key = f"{SERVED_PREFIX}{label}"
        self.values[key] = self.values.get(key, 0) + 1

    def snapshot(self) -> dict[str, dict[str, int]]:
        return {self.contract: dict(self.values)}


def _config(contract: str, role: str, attempt: int = 1, model: str | None = None,
            inputs: HeldInputs | None = None) -> RunnableConfig:
    """The call's labels on top of the enclosing run's metadata and tags (a config passed to a
    runnable replaces them, it does not add to them): contract, role, the model asked (so the
    trace of every call names the model that answered) and the handle of the contract's structured
    inputs when the prompt carries them (``reins.runtime.llm.prompt_inputs``: a handle, so a trace never
    holds prompt text; a provider never sees metadata). Read from
    the run's config directly, not through ``ensure_config``, which also copies its callback
    manager; the call inherits the rest."""
    base = current_config()
    metadata = {**(base.get("metadata") or {}), CONTRACT_KEY: contract, ROLE_KEY: role}
    if model:
        metadata[MODEL_KEY] = model
    if inputs is not None:
        metadata[INPUTS_KEY] = inputs.handle
    # nostream: LangGraph's messages stream never carries a contract's JSON or tool calls (a reply's
    # text is streamed on its own, runtime.llm.reply_stream).
    tags = [*(base.get("tags") or []), f"contract:{contract}", TAG_NOSTREAM] + (
        [f"retry:attempt:{attempt}"] if attempt > 1 else [])
    return {"metadata": metadata, "run_name": contract, "tags": tags}


# ------------------------------------------------------------------------------ memoisation
#
# Building a structured-output or tool-bound runnable (JSON schema generation, tool conversion) costs
# far more than a zero-latency model call, and its inputs barely vary: one schema class per contract,
# one tool set per phase, one policy per role. Both are therefore built once and reused. A runnable
# binds no per-call data (labels and callbacks travel in the call's config), so a reused one behaves
# exactly like a fresh one.

BOUND_CACHE_SIZE = 256  # bound runnables kept per model set (least recently used dropped first)


@lru_cache(maxsize=None)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a contract's schema class, generated once per class (treat as read-only)."""
    spec = schema.model_json_schema()
    spec.setdefault("title", schema.__name__)
    return spec


@lru_cache(maxsize=None)
def sent_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema a provider is sent for a contract: the strict one without what grammar builders
    refuse (``reins.policies.models.provider_schema``); answers are still validated against the strict one."""
    return provider_schema(_json_schema(schema))


def sent_tool(tool: Any) -> dict[str, Any]:
    """A tool as a provider is sent it: its OpenAI definition with compilable parameters."""
    spec = convert_to_openai_tool(tool)
    function = spec.get("function")
    if isinstance(function, dict) and "parameters" in function:
        spec = {**spec, "function": {**function, "parameters": provider_schema(function["parameters"])}}
    return spec


@lru_cache(maxsize=None)
def _schema_text(schema: type[BaseModel]) -> str:
    return json.dumps(_json_schema(schema))


def _freeze(value: Any) -> Hashable:
    """A hashable key for call options and tool definitions: equal content gives an equal key."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, BaseTool):
        # What binding reads from a tool: its name, description and argument schema (never its function).
        return ("tool", value.name, value.description, _freeze(value.args_schema))
    if isinstance(value, (set, frozenset)):
        return frozenset(_freeze(v) for v in value)
    hash(value)  # classes, functions, enums, strings, numbers; anything else is not cacheable
    return value


class _BoundRunnables:
    """Bound runnables per ``ModelSet`` instance, keyed by role, schema or tool set, method and options.

    Entries are held by the model set's identity and dropped when it is garbage-collected (a bound
    runnable holds its model, so keying by the model itself would keep every model alive); the key
    holds the objects it names (schema classes, options), so an id is never reused for another one.
    """

    def __init__(self, maxsize: int = BOUND_CACHE_SIZE):
        self.maxsize = maxsize
        # Re-entrant: a model set's weakref callback (``_forget``) runs whenever the garbage collector
        # frees it — possibly inside ``get`` on the same thread while the lock is held. With a plain
        # Lock that deadlocked the thread (seen as a test hanging until pytest-timeout).
        self._lock = threading.RLock()
        self._sets: dict[int, tuple[weakref.ref, OrderedDict[Hashable, Runnable]]] = {}

    def get(self, models: ModelSet, key: Hashable, build: Callable[[], Runnable]) -> Runnable:
        set_id = id(models)
        with self._lock:
            slot = self._sets.get(set_id)
            if slot is not None and slot[0]() is models and key in slot[1]:
                slot[1].move_to_end(key)
                return slot[1][key]
        runnable = build()  # outside the lock: a duplicate build in a race is harmless
        with self._lock:
            slot = self._sets.get(set_id)
            if slot is None or slot[0]() is not models:
                slot = (weakref.ref(models, lambda _, set_id=set_id: self._forget(set_id)), OrderedDict())
                self._sets[set_id] = slot
            slot[1][key] = runnable
            while len(slot[1]) > self.maxsize:
                slot[1].popitem(last=False)
        return runnable

    def _forget(self, set_id: int) -> None:
        with self._lock:
            slot = self._sets.get(set_id)
            if slot is not None and slot[0]() is None:
                del self._sets[set_id]

    def __contains__(self, models: ModelSet) -> bool:
        slot = self._sets.get(id(models))
        return slot is not None and slot[0]() is models


BOUND_RUNNABLES = _BoundRunnables()


RUNAWAY_KEY = "reins_runaway"  # in a stopped answer's response metadata: the loop that stopped it
RUNAWAY_CHECK_CHARS = 200  # a streamed answer is checked for a loop each time it grew this much


def _runaway_stop(text: str) -> AIMessage:
    """A free-text answer stopped in a loop: cut off at that point, and it says why."""
    return AIMessage(content=text, response_metadata={"finish_reason": "length", RUNAWAY_KEY: runaway(text)})


class _LoopWatch:
    """Adds up a streamed answer and says when it runs away in a loop (``reins.policies.models.runaway_text``)."""

    def __init__(self) -> None:
        self.total: Any = None
        self.checked = 0

    def add(self, chunk: Any) -> bool:
        self.total = chunk if self.total is None else self.total + chunk
        text = message_text(self.total)
        if len(text) - self.checked < RUNAWAY_CHECK_CHARS:
            return False
        self.checked = len(text)
        return runaway(text) is not None

    def result(self, stopped: bool) -> Any:
        if stopped:
            return _runaway_stop(message_text(self.total))
        return message_chunk_to_message(self.total) if self.total is not None else AIMessage(content="")


@dataclass(frozen=True)
class _Invoke:
    """One request of a call: these messages to this runnable, with this config. ``watch``: a free-text
    answer, streamed and stopped as soon as it runs away in a loop (the server stops generating
    when the stream is closed). ``timeout_s``: how long a streamed answer may take in all — the
    client's own timeout bounds only the wait for each chunk, so a slow server that keeps writing
    would otherwise run past the role's timeout (and the run's worst-case bound)."""

    runnable: Runnable
    messages: Sequence[BaseMessage]
    config: RunnableConfig
    watch: bool = False
    timeout_s: float | None = None

    def _overran(self, started: float) -> bool:
        return self.timeout_s is not None and time.monotonic() - started > self.timeout_s

    def run(self) -> Any:
        if not self.watch:
            return self.runnable.invoke(list(self.messages), self.config)
        started, watch, chunks = time.monotonic(), _LoopWatch(), self.runnable.stream(list(self.messages), self.config)
        try:
            for chunk in chunks:
                if watch.add(chunk):
                    return watch.result(stopped=True)
                if self._overran(started):
                    raise stream_timeout()
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        return watch.result(stopped=False)

    async def arun(self) -> Any:
        if not self.watch:
            return await self.runnable.ainvoke(list(self.messages), self.config)
        started, watch, chunks = time.monotonic(), _LoopWatch(), self.runnable.astream(list(self.messages), self.config)
        try:
            async for chunk in chunks:
                if watch.add(chunk):
                    return watch.result(stopped=True)
                if self._overran(started):
                    raise stream_timeout()
        finally:
            await chunks.aclose()
        return watch.result(stopped=False)


def stream_timeout() -> openai.APITimeoutError:
    """A streamed answer that ran past its timeout: the provider timeout a request that is not
    streamed gets from its client (retried as that one is; the stream is closed, so the server stops)."""
    return openai.APITimeoutError(request=httpx.Request("POST", "streamed-answer"))


@dataclass(frozen=True)
class _Wait:
    """The pause before a retry."""

    seconds: float

    def run(self) -> None:
        time.sleep(self.seconds)

    async def arun(self) -> None:
        await asyncio.sleep(self.seconds)


class _Caller:
    """Shared mechanics of one contract run: labelling, retries, fallbacks, timeouts and metering.

    The fallback is an ordered loop over the role's models here rather than LangChain's
    ``with_fallbacks``: each model keeps its own retries and backoff, every attempt its own labels
    (contract, role, the model's label), the meter counts retries and fallbacks, and a 401/403 or
    the run's deadline stops the loop (``reins.policies.models.fallback``) instead of moving on.
    """

    def __init__(self, contract: str, role: str, models: ModelSet, inputs: Mapping[str, Any] | None = None):
        self.contract = contract
        self.role = role
        self.models = models
        # The contract's structured inputs, held while this caller lives; each call's metadata names them.
        self.inputs = HeldInputs(inputs) if inputs is not None else None
        self.meter = _Meter(contract)

    def _runnable(
        self,
        role: str,
        schema: type[BaseModel] | None,
        method: str,
        tools: Sequence[Any] | None,
        options: Mapping[str, Any] | None = None,
        index: int = 0,
        more_room: bool = False,
    ) -> Runnable:
        """The role's model number ``index`` (0: its own, then its fallbacks) bound for this call with
        the role's policy (memoised per model set, role, model, schema or tools, options).
        ``more_room``: the policy's output bound doubled once, up to its limit (the repair after a cut-off)."""
        _, chosen = self.models.chain(role)[index]
        options = dict(options or {})
        policy = self.models.policy(role)
        if more_room:
            policy = replace(policy, max_tokens=repair_output_bound(policy.max_tokens, policy.max_tokens_limit))

        def build() -> Runnable:
            model, policy_options = with_role_policy(chosen, policy)
            bound = {**policy_options, **options}
            if tools is not None:
                runnable: Runnable = model.bind_tools([sent_tool(tool) for tool in tools], **bound)
            elif schema is not None:
                # A copy: a provider integration may adjust the schema it is given (the cached one stays intact).
                spec = copy.deepcopy(sent_schema(schema))
                extra = {**structured_options(method, self.models.tool_choice), **bound}
                runnable = model.with_structured_output(spec, method=method, include_raw=True, **extra)
            else:
                if "stream_usage" in type(model).model_fields:  # a free-text call is streamed: keep its token counts
                    bound["stream_usage"] = True
                runnable = model.bind(**bound) if bound else model
            return runnable

        try:
            tools_key = None if tools is None else _freeze(list(tools))
            key = (role, index, more_room, schema, method if schema is not None else None, tools_key, _freeze(options))
        except TypeError:  # an unhashable tool or option: build without caching
            return build()
        return BOUND_RUNNABLES.get(self.models, key, build)

    def _retry_wait(self, role: str, attempt: int, error: Exception) -> float | None:
        """After attempt number ``attempt`` failed with ``error``: the wait before the next attempt,
        or None when the error is final. Only retryable provider failures are retried, ``retries``
        times per the role's policy, after the backoff or the provider's ``Retry-After`` if longer,
        and only when that wait fits before the deadline; anything else — a 4xx, a validation error,
        a bare ``TimeoutError`` (a deadline) — is final at once.
        """
        policy = self.models.policy(role)
        if attempt > max(policy.retries, 0) or not is_retryable(error):
            return None
        response = getattr(error, "response", None)
        asked = retry_after_s(dict(getattr(response, "headers", None) or {}), time.time())
        room = remaining_s()
        return retry_wait_s(backoff_s(attempt, policy.backoff_initial_s, random.random()), asked,
                            policy.timeout_s if room is None else room)

    def _failed(self, kind: str, started: float, error: Exception) -> Exception:
        """A call that got no answer: counted (with its retries) and its metrics carried on the error,
        so a failed run's metrics show every request it made."""
        self.meter.count(kind, None, started)
        self.meter.values["failed_calls"] += 1
        try:
            error.metrics = self.meter.snapshot()  # type: ignore[attr-defined]  # read by runtime.execution.steps
        except AttributeError:  # an exception type with fixed slots: the counts stay in the meter
            pass
        return error

    def _next_attempt(self, attempt: int) -> int:
        """The number of the attempt about to start; every attempt after the first counts as a retry."""
        self.meter.values["retries"] += 1
        return attempt + 1

    def steps(self, kind: str, role: str, messages: Sequence[BaseMessage], *, schema=None, method="json_schema",
              tools=None, options=None, more_room=False):
        """One call once, for both drivers (``reins.runtime.execution.driving``): yields an ``_Invoke`` (answered with its
        result, or with its error thrown in) or a ``_Wait``; returns the result. Each model of the
        role's chain gets its retries; a final provider failure moves to the next model
        (``reins.policies.models.fallback``).
        ``more_room``: the repair after a cut-off, with twice the role's output bound once. A free-text
        call (no schema, no tools) is streamed and stopped early when it loops."""
        started = time.perf_counter()
        watch = schema is None and tools is None
        chain = self.models.chain(role)
        for index, (label, _) in enumerate(chain):
            if index + 1 < len(chain) and MISSING_MODELS.missing(self.models, role, label):
                self.meter.values["fallbacks"] += 1  # found not there earlier in the run
                continue
            runnable = self._runnable(role, schema, method, tools, options, index, more_room)
            attempt, failure = 1, None
            while True:
                try:
                    result = yield from ledgered(
                        _Invoke(runnable, messages, _config(self.contract, role, attempt, label, self.inputs), watch,
                                self.models.policy(role).timeout_s),
                        self.models.policy(role), more_room, self.meter.snapshot)
                    break
                except BudgetCapReached:  # refused before it was made: no retry, no fallback
                    raise
                except openai.LengthFinishReasonError as error:
                    result = _cut_off(schema is not None, error)
                    break
                except Exception as error:
                    failure, wait = error, self._retry_wait(role, attempt, error)
                if wait is None:
                    break
                yield _Wait(wait)
                attempt, failure = self._next_attempt(attempt), None
            if failure is not None:
                if index + 1 < len(chain) and falls_back_after(failure):
                    self.meter.values["fallbacks"] += 1
                    cause = failure_cause(failure)
                    if skips_rest_of_run(cause):
                        MISSING_MODELS.mark(self.models, role, label)
                    announce_fallback(role, label, cause, chain[index + 1][0])
                    continue
                if isinstance(failure, TIMEOUT_ERRORS):
                    self.meter.count(kind, None, started)
                    raise ContractTimeout(self.contract, self.meter.snapshot()) from failure
                raise self._failed(kind, started, failure)
            self.meter.served(label)
            self.meter.count(kind, result.get("raw") if isinstance(result, dict) else result, started)
            return result
        raise AssertionError("a role always has at least one model")  # pragma: no cover


def _cut_off(structured: bool, error: BaseException) -> Any:
    """What a call returns when the OpenAI SDK refused to parse a response cut off at the token limit
    (json_schema output raises instead of returning it): the same truncated result any other path
    gives, so the contract algorithm treats it as ``truncated`` and uses its one repair."""
    message = AIMessage(content="", response_metadata={"finish_reason": "length"})
    return {"raw": message, "parsed": None, "parsing_error": error} if structured else message


def structured_options(method: str, tool_choice: str) -> dict[str, Any]:
    """Extra ``with_structured_output`` options: with ``function_calling``, ask for the tool call in the
    configured style (llama.cpp and other local servers refuse a named tool_choice object)."""
    if method != "function_calling":
        return {}
    choice = structured_tool_choice(tool_choice)
    return {} if choice is None else {"tool_choice": choice}
