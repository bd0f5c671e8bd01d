"""Why a model call failed, as a short cause class a report and the CLI can show.

``failure_cause(error)`` names the class of the failure — ``connection refused``, ``timeout``,
``HTTP 401``, ``model not found``, ``context window exceeded (prompt N tokens, context M)``,
``invalid output after repair: <codes>`` — and never copies a
provider's message (it can carry request details, hosts or keys). The text is redacted anyway.
"""

from __future__ import annotations

import re

import httpx
import openai

from policies.redaction import redact

CAUSE_LIMIT = 200


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
    from runtime.contracts import ContractError, ContractTimeout

    if isinstance(error, ContractError):
        codes = list(dict.fromkeys(issue.code for issue in error.issues))
        cause = f"invalid output after repair: {', '.join(codes) or 'unknown'}"
    elif isinstance(error, (ContractTimeout, TimeoutError, openai.APITimeoutError, httpx.TimeoutException)):
        cause = "timeout"
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
