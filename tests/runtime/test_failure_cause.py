"""Failures say why: one cause class per kind of failure, never a provider's own message."""

from __future__ import annotations

import httpx
import openai
import pytest

from reins.runtime.contracts import ContractError, ContractIssue, ContractTimeout
from reins.runtime.llm.failures import failure_cause

REQUEST = httpx.Request("POST", "https://provider.invalid/v1/chat/completions")
KEY = "sk-proj-ABCDEF0123456789abcdef0123456789"


def _status(status: int, body: object = None) -> openai.APIStatusError:
    response = httpx.Response(status, request=REQUEST)
    return openai.OpenAI(api_key="x", base_url="https://provider.invalid/v1")._make_status_error(
        f"Incorrect API key provided: {KEY}", body=body, response=response
    )


LLAMA_MESSAGE = "request (636 tokens) exceeds the available context size (512 tokens), try increasing it"
OPENAI_MESSAGE = ("This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 "
                  f"tokens. {KEY}")


def _refused() -> openai.APIConnectionError:
    error = openai.APIConnectionError(request=REQUEST)
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as inner:
            raise httpx.ConnectError("[Errno 111] Connection refused") from inner
    except httpx.ConnectError as transport:
        error.__cause__ = transport
    return error


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (_refused(), "connection refused"),
        (openai.APIConnectionError(request=REQUEST), "connection failed"),
        (openai.APITimeoutError(request=REQUEST), "timeout"),
        (ContractTimeout("delivery.plan"), "timeout"),
        (TimeoutError("deadline"), "timeout"),
        (_status(401), "HTTP 401"),
        (_status(403), "HTTP 403"),
        (_status(404), "model not found"),
        (_status(429), "HTTP 429"),
        (_status(500), "HTTP 500"),
        (ContractError("delivery.plan", [ContractIssue("$", "truncated")]), "invalid output after repair: truncated"),
        (ContractError("delivery.plan", [ContractIssue("a", "missing"), ContractIssue("b", "missing"),
                                         ContractIssue("tasks", "dependency_cycle")]),
         "invalid output after repair: missing, dependency_cycle"),
        # a prompt larger than the server's context (llama.cpp with -c 512, as captured; OpenAI)
        (_status(400, {"error": {"code": 400, "message": LLAMA_MESSAGE, "type": "exceed_context_size_error",
                                 "n_prompt_tokens": 636, "n_ctx": 512}}),
         "context window exceeded (prompt 636 tokens, context 512)"),
        (_status(400, {"error": {"message": LLAMA_MESSAGE, "type": "exceed_context_size_error"}}),
         "context window exceeded (prompt 636 tokens, context 512)"),
        (_status(400, {"error": {"message": OPENAI_MESSAGE, "type": "invalid_request_error",
                                 "code": "context_length_exceeded"}}),
         "context window exceeded (prompt 9001 tokens, context 8192)"),
        (_status(400, {"error": {"message": f"too big {KEY}", "type": "exceed_context_size_error"}}),
         "context window exceeded"),
        (_status(400, {"error": {"message": LLAMA_MESSAGE, "type": "invalid_request_error"}}), "HTTP 400"),
        (_status(400), "HTTP 400"),
        (_status(413, {"error": {"type": "exceed_context_size_error", "n_prompt_tokens": 1}}), "HTTP 413"),
        (NotImplementedError("bind_tools"), "no tool calling"),
        (RuntimeError(f"boom {KEY}"), "error (RuntimeError)"),
    ],
)
def test_failure_cause(error, cause):
    assert failure_cause(error) == cause
    assert KEY not in failure_cause(error)


def test_the_failed_stage_comes_from_langgraphs_task_note():
    from reins.runtime.llm.failures import failed_stage, failure_line

    error = _refused()
    assert failed_stage(error) is None and failure_line(error) == "connection refused"
    error.add_note("During task with name 'planning_decision' and id '1f2e'")
    assert failed_stage(error) == "planning_decision"
    assert failure_line(error) == "planning_decision failed: connection refused"
    odd = RuntimeError("x")
    odd.add_note("During task with name 'a b; rm -rf' and id '1'")  # not a node name: not echoed
    assert failed_stage(odd) is None


def _wrapped_by_langchain() -> Exception:
    """A provider failure re-raised by an integration as another type, the original as its cause."""
    error = RuntimeError("wrapped: Failed to initialize samplers: failed to parse grammar")
    error.__cause__ = _status(400)
    return error


@pytest.mark.parametrize(
    ("error", "label", "said"),
    [
        (_status(400), "execution_failed (HTTP 400)", "HTTP 400"),
        (_status(404), "execution_failed (model not found)", "model not found"),
        (_refused(), "execution_failed (connection refused)", "connection refused"),
        (_wrapped_by_langchain(), "execution_failed (HTTP 400)", "HTTP 400"),
        (RuntimeError("boom"), "execution_failed (RuntimeError)", "RuntimeError: boom"),  # not a provider's
    ],
)
def test_a_provider_failure_is_named_by_its_cause_in_traces_and_reasons(error, label, said):
    from reins.runtime.llm.failures import safe_error
    from reins.runtime.llm.failures import failure_label

    assert failure_label(error) == label
    assert safe_error(error) == said
    assert KEY not in safe_error(error) and "Incorrect API key" not in safe_error(error)
    assert "samplers" not in safe_error(error)
