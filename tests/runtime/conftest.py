"""Shared fixtures for the runtime tests: fast model sets and provider errors built offline."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import openai
import pytest
from langchain_core.language_models import BaseChatModel

from reins.runtime.llm.models import ModelSet, RolePolicy
from reins.runtime.config.settings import ROLES

# A retry policy with a millisecond backoff so retry tests take no wall time.
FAST_POLICY = RolePolicy(timeout_s=5, retries=1, temperature=0.0, backoff_initial_s=0.001)


@pytest.fixture
def fast_models() -> Callable[[BaseChatModel], ModelSet]:
    """Every role served by ``model``, with one retry after a tiny backoff."""

    def build(model: BaseChatModel) -> ModelSet:
        return ModelSet.uniform(model).with_policies(**dict.fromkeys(ROLES, FAST_POLICY))

    return build


@pytest.fixture
def provider_error() -> Callable[[int], openai.APIError]:
    """An openai exception for an HTTP status, built on a local request (nothing is sent)."""
    request = httpx.Request("POST", "https://provider.invalid/v1/chat/completions")
    by_status: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        404: openai.NotFoundError,
        408: openai.APIStatusError,  # the SDK has no class of its own for 408
        409: openai.ConflictError,
        429: openai.RateLimitError,
        500: openai.InternalServerError,
        503: openai.InternalServerError,
    }

    def build(status: int) -> openai.APIError:
        if status == 0:  # 0 stands for "no response": the client timed out
            return openai.APITimeoutError(request=request)
        if status == -1:  # -1 stands for "no connection" (refused or reset)
            return openai.APIConnectionError(request=request)
        response = httpx.Response(status, request=request)
        return by_status[status](f"status {status}", response=response, body=None)

    return build
