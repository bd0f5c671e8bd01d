"""Failures, classified once: every part of the runtime that asks "what kind of failure is this?"
reads this module.

- A model call's failure: retryable (``is_retryable``: the OpenAI SDK's own set, ``reins.policies.models.retry``),
  a timeout (``TIMEOUT_ERRORS``; a bare ``TimeoutError`` is the run's own deadline), and whether it
  moves the call to the role's next model (``falls_back_after``, ``reins.policies.models.fallback``).
- A failed step's code (``failure_code``: contract_failure | timeout | execution_failed) and the
  label a trace may show (``failure_label``).
- A failure's cause class for a report and the CLI (``failure_cause``): ``connection refused``,
  ``timeout``, ``HTTP 401``, ``model not found``, ``context window exceeded (prompt N tokens,
  context M)``, ``invalid output after repair: <codes>``. It never copies a provider's message (it
  can carry request details, hosts or keys); the text is redacted anyway.
- A tool call's failure kind (``tool_failure_kind``: connection | tool_error, from ``reins.policies.tools.calls``).
"""

from __future__ import annotations

import asyncio

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from langchain_core.exceptions import ModelError

from reins.policies.models.fallback import falls_back
from reins.policies.text.redaction import redact
from reins.policies.models.retry import is_retryable_status
from reins.policies.tools.calls import CONNECTION, TOOL_ERROR
from reins.runtime.execution.run_ledger import BudgetCapReached

CAUSE_LIMIT = 200
MAX_REPAIR_ISSUES = 5  # the issues a repair request and a contract failure name, at most

# ------------------------------------------------------------------------------ contract failures


@dataclass(frozen=True)
class ContractIssue:
    path: str
    code: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "code": self.code}


class ContractError(Exception):
    """A model output failed its contract twice (once, then once more after the repair)."""

    def __init__(self, contract: str, issues: Sequence[ContractIssue], metrics: Mapping[str, Any] | None = None):
        self.contract = contract
        self.issues = list(issues)[:MAX_REPAIR_ISSUES]
        self.metrics = dict(metrics or {})
        listed = ", ".join(f"{i.path}: {i.code}" for i in self.issues) or "no details"
        super().__init__(f"contract {contract} output was invalid after one repair ({listed})")


class ContractTimeout(Exception):
    """The model call for a contract timed out (after the role's retries)."""

    def __init__(self, contract: str, metrics: Mapping[str, Any] | None = None):
        self.contract = contract
        self.metrics = dict(metrics or {})
        super().__init__(f"contract {contract} timed out")


# ------------------------------------------------------------------------------ model calls


class _RetryableStatusType(type):
    """``isinstance(error, RetryableStatusError)`` is true for an HTTP error with a retryable status."""

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, openai.APIStatusError) and is_retryable_status(instance.status_code)


class RetryableStatusError(Exception, metaclass=_RetryableStatusType):
    """A virtual class: no error is raised as this; it matches 408, 409, 429 and 5xx responses."""


# Exactly the OpenAI SDK's retryable set (policies.models.retry): connection errors and provider timeouts
# (openai.APITimeoutError is an APIConnectionError), 408, 409, 429 and 5xx. Any other 4xx or a
# validation error is final. A bare TimeoutError is not retried: it is what a deadline raises
# (asyncio.wait_for, the reviewers' per-call deadline), and retrying a deadline would silently double it.
RETRYABLE_ERRORS: tuple[type[BaseException], ...] = (
    openai.APIConnectionError,
    RetryableStatusError,
    httpx.TimeoutException,
    httpx.NetworkError,
)
TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (TimeoutError, openai.APITimeoutError, httpx.TimeoutException)


def is_retryable(error: BaseException) -> bool:
    return isinstance(error, RETRYABLE_ERRORS)


def is_deadline(error: BaseException) -> bool:
    """The run's own deadline (a bare ``TimeoutError``), not a provider's timeout."""
    return isinstance(error, TimeoutError) and not isinstance(error, openai.APITimeoutError)


def falls_back_after(error: BaseException) -> bool:
    """Whether ``error`` (final for its model) moves the call to the role's next model."""
    status = getattr(error, "status_code", None)
    return falls_back(status if isinstance(status, int) else None, retryable=is_retryable(error),
                      deadline=is_deadline(error))


# ------------------------------------------------------------------------------ failed steps

CONTRACT_FAILURE = "contract_failure"
TIMEOUT = "timeout"
EXECUTION_FAILED = "execution_failed"


def failure_code(error: BaseException) -> str:
    """What kind of failure: the output broke its contract (after the repair), no answer in time
    (a contract's own timeout or a deadline), or anything else that went wrong."""
    if isinstance(error, ContractError):
        return CONTRACT_FAILURE
    if isinstance(error, (ContractTimeout, TimeoutError)):
        return TIMEOUT
    return EXECUTION_FAILED


def failure_label(error: BaseException) -> str:
    """What a trace may say about a failure: the code, issue codes for a contract, the cause class of
    a provider failure, else the type. Provider messages are never copied (they can carry request
    details)."""
    code = failure_code(error)
    if isinstance(error, ContractError):
        return f"{code} ({', '.join(f'{i.path}: {i.code}' for i in error.issues)})"
    if code == TIMEOUT:
        return code
    if isinstance(error, BudgetCapReached):
        return f"{code} ({error})"
    provider = provider_failure(error)
    return f"{code} ({failure_cause(provider) if provider is not None else type(error).__name__})"


# What a model provider's client raises (any provider: LangChain classifies them as ModelError).
PROVIDER_ERRORS: tuple[type[BaseException], ...] = (openai.APIError, openai.OpenAIError, httpx.HTTPError, ModelError)


def provider_failure(error: BaseException) -> BaseException | None:
    """The failure a model provider's client raised (its message is the provider's): the error
    itself or what it was raised from; None when no provider is involved."""
    return next((link for link in _chain(error) if isinstance(link, PROVIDER_ERRORS)), None)


# ------------------------------------------------------------------------------ tool calls


def innermost(error: BaseException) -> BaseException:
    """The failure itself, out of the exception groups anyio task groups wrap it in."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def tool_failure_kind(error: BaseException) -> str:
    """A tool call that raised: a lost connection to its server (worth one more try for a read-only
    call), or the tool's own error."""
    error = innermost(error)
    name = type(error).__name__
    if isinstance(error, (ConnectionError, EOFError, OSError)) or name in (
        "McpError", "BrokenResourceError", "ClosedResourceError", "ConnectError", "RemoteProtocolError"):
        return CONNECTION
    return TOOL_ERROR


# ------------------------------------------------------------------------------ cause classes


def _chain(error: BaseException):
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


# A versioned API path segment (/v1, /v1beta, /api/v2 …); an OpenAI-compatible base URL without one
# answers 404 on every route, which is no statement about the model.
_VERSION_PATH = re.compile(r"/v\d+[a-z0-9]*(/|$)", re.I)


def _request_path(error: BaseException) -> str:
    """The path of the request that failed; a version path is assumed when it is not known."""
    try:
        return str(error.request.url.path)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):
        return "/v1"


def _refused(error: BaseException) -> bool:
    return any(isinstance(link, ConnectionRefusedError) for link in _chain(error))


def failure_cause(error: BaseException) -> str:
    """A short, redacted cause class for a failed model call (see the module docstring)."""
    if isinstance(error, ContractError):
        codes = list(dict.fromkeys(issue.code for issue in error.issues))
        cause = f"invalid output after repair: {', '.join(codes) or 'unknown'}"
    elif isinstance(error, (ContractTimeout, *TIMEOUT_ERRORS)):
        cause = "timeout"
    elif isinstance(error, BudgetCapReached):
        cause = str(error)
    elif isinstance(error, openai.APIStatusError) and (overflow := context_overflow(error)) is not None:
        cause = overflow
    elif isinstance(error, openai.APIStatusError):
        status = error.status_code
        if status == 404 and not _VERSION_PATH.search(_request_path(error)):
            cause = "HTTP 404: the base URL has no version path such as /v1"
        else:
            cause = "model not found" if status == 404 else f"HTTP {status}"
    elif isinstance(error, (openai.APIConnectionError, httpx.TransportError, ConnectionError)):
        cause = "connection refused" if _refused(error) else "connection failed"
    elif isinstance(error, NotImplementedError):
        cause = "no tool calling"
    else:
        cause = f"error ({type(error).__name__})"
    return redact(cause, CAUSE_LIMIT)


# A prompt larger than the server's context window: llama.cpp's error type and OpenAI's error code.
CONTEXT_OVERFLOW_KINDS = frozenset({"exceed_context_size_error", "context_length_exceeded"})
# Token counts only, read from the two known message forms (never the message itself).
_COUNTS_IN_MESSAGE = (
    re.compile(r"request \((?P<prompt>\d{1,9}) tokens\) exceeds the available context size \((?P<context>\d{1,9}) tokens\)"),
    re.compile(r"maximum context length is (?P<context>\d{1,9}) tokens\. However, your messages resulted in "
               r"(?P<prompt>\d{1,9}) tokens"),
)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def context_overflow(error: openai.APIStatusError) -> str | None:
    """``context window exceeded`` with the prompt's and the context's token counts when the server
    gives them (llama.cpp: ``n_prompt_tokens`` / ``n_ctx``), or None for any other error."""
    body = error.body if isinstance(error.body, dict) else {}
    if error.status_code != 400 or not {body.get("type"), body.get("code")} & CONTEXT_OVERFLOW_KINDS:
        return None
    prompt, context = _count(body.get("n_prompt_tokens")), _count(body.get("n_ctx"))
    if prompt is None:
        for pattern in _COUNTS_IN_MESSAGE:
            match = pattern.search(str(body.get("message") or ""))
            if match:
                prompt, context = int(match["prompt"]), int(match["context"])
                break
    if prompt is None:
        return "context window exceeded"
    return f"context window exceeded (prompt {prompt} tokens" + (f", context {context})" if context else ")")


_TASK_NOTE = re.compile(r"^During task with name '([A-Za-z0-9_\-]{1,64})'")


def failed_stage(error: BaseException) -> str | None:
    """The graph node a failure escaped from (LangGraph notes it on the exception), if any."""
    for note in getattr(error, "__notes__", None) or ():
        match = _TASK_NOTE.match(str(note))
        if match:
            return match.group(1)
    return None


def stage_failure(stage: str, error: BaseException) -> str:
    """``<stage> failed: <cause>`` for a model call that failed in a known stage."""
    return f"{stage} failed: {failure_cause(error)}"


def failure_line(error: BaseException) -> str:
    """One line for a user: the failed stage when known, and the cause class."""
    stage = failed_stage(error)
    return stage_failure(stage, error) if stage else failure_cause(error)


# Raised only by Reins' own machinery around a call, never by a tool: its text says nothing true about
# what the tool did, so it never becomes the tool's recorded outcome.
INTERNAL_ERRORS: tuple[type[BaseException], ...] = (asyncio.InvalidStateError,)


def tool_failure_text(tool: str, error: BaseException) -> str:
    """The observation recorded for a tool call that raised: the tool's own (redacted) error, or, for an
    internal one, that its outcome is unknown."""
    if isinstance(innermost(error), INTERNAL_ERRORS):
        return f"{tool}: its outcome is unknown (an internal error in Reins while waiting for it; it may have run)"
    return f"{tool} failed: {safe_error(error, 300)}"


def safe_error(error: BaseException, limit: int = 500) -> str:
    """A redacted, bounded one-line description of an error, fit for traces and users. A provider's
    failure is named by its cause class (``HTTP 400``, ``connection refused`` …), never by the
    provider's message, which can carry request details, paths or keys."""
    if isinstance(error, (ContractError, ContractTimeout, BudgetCapReached)):
        return redact(str(error), limit)
    provider = provider_failure(error)
    if provider is not None:
        return failure_cause(provider)
    return redact(f"{type(error).__name__}: {error}", limit)
