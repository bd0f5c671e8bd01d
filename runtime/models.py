"""Role → chat model mapping, the per-role call policy, and the OpenAI-compatible factory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import httpx
import openai
from langchain_core.language_models import BaseChatModel

from policies.retry import is_retryable_status
from runtime.settings import ROLES, Settings


@dataclass(frozen=True)
class RolePolicy:
    """How calls for one role behave: per-call timeout, retries on retryable errors, temperature, and
    the output bound every request of the role sends (``REINS_MAX_TOKENS_<ROLE>`` overrides it)."""

    timeout_s: float
    retries: int
    temperature: float
    backoff_initial_s: float = 1.0
    max_tokens: int = 4096


# Timeouts, retries and temperatures per role; the output bounds fit the largest valid answer of the
# role's contracts (a plan or task list with its markdown, a task-list draft) with room to spare.
ROLE_POLICIES: Mapping[str, RolePolicy] = {
    "supervisor": RolePolicy(120, 1, 0.0, max_tokens=2048),
    "manager": RolePolicy(120, 1, 0.0, max_tokens=512),
    "planner": RolePolicy(180, 1, 0.2, max_tokens=8192),
    "reviewer": RolePolicy(120, 1, 0.1, max_tokens=4096),
    "encoder": RolePolicy(120, 1, 0.0, max_tokens=8192),
    "tasklist": RolePolicy(180, 1, 0.2, max_tokens=8192),
    "polish": RolePolicy(60, 1, 0.3, max_tokens=1024),
    "chat": RolePolicy(60, 1, 0.2, max_tokens=2048),
}

class _RetryableStatusType(type):
    """``isinstance(error, RetryableStatusError)`` is true for an HTTP error with a retryable status."""

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, openai.APIStatusError) and is_retryable_status(instance.status_code)


class RetryableStatusError(Exception, metaclass=_RetryableStatusType):
    """A virtual class: no error is raised as this; it matches 408, 409, 429 and 5xx responses."""


# Exactly the OpenAI SDK's retryable set (policies.retry): connection errors and provider timeouts
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


@dataclass(frozen=True)
class ModelSet:
    """Which chat model serves each role, and how calls for that role behave."""

    models: Mapping[str, BaseChatModel]
    policies: Mapping[str, RolePolicy] = field(default_factory=lambda: dict(ROLE_POLICIES))
    labels: Mapping[str, str] = field(default_factory=dict)
    # json_schema for providers with native structured output; function_calling for the rest.
    structured_method: str = "json_schema"
    # How a tool call is asked for: required | named | auto (REINS_TOOL_CHOICE).
    tool_choice: str = "required"

    def __post_init__(self) -> None:
        missing = [role for role in ROLES if role not in self.models]
        if missing:
            raise ValueError(f"ModelSet is missing roles: {', '.join(missing)}")

    @classmethod
    def uniform(cls, model: BaseChatModel, **kwargs: object) -> ModelSet:
        """Every role served by one model (typical for ScriptedModel in tests)."""
        return cls(models={role: model for role in ROLES}, **kwargs)  # type: ignore[arg-type]

    def get(self, role: str) -> BaseChatModel:
        if role not in self.models:
            raise KeyError(f"unknown model role {role!r}")
        return self.models[role]

    def policy(self, role: str) -> RolePolicy:
        return self.policies.get(role, ROLE_POLICIES["chat"])

    def label(self, role: str) -> str:
        return self.labels.get(role) or type(self.models[role]).__name__

    def with_models(self, overrides: Mapping[str, BaseChatModel]) -> ModelSet:
        unknown = set(overrides) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown model roles: {', '.join(sorted(unknown))}")
        return replace(self, models={**self.models, **overrides})

    def with_policies(self, **overrides: RolePolicy) -> ModelSet:
        return replace(self, policies={**self.policies, **overrides})


def create_chat_model(
    name: str, role: str, settings: Settings, *, timeout_s: float | None = None, max_tokens: int | None = None
) -> BaseChatModel:
    """An OpenAI-compatible chat model (OpenAI, DeepSeek, vLLM, Ollama /v1, llama.cpp server).

    ``timeout_s`` / ``max_tokens`` override the role's policy (``reins doctor --check`` probes small)."""
    from langchain_openai import ChatOpenAI

    policy = ROLE_POLICIES[role]
    max_tokens = max_tokens or settings.role_max_tokens.get(role, policy.max_tokens)
    # langchain-openai sends its max_tokens as max_completion_tokens, which older OpenAI-compatible
    # servers ignore; the classic field goes in the request body as it is.
    bound = {"max_tokens": max_tokens} if settings.max_tokens_param == "max_completion_tokens" else {
        "extra_body": {"max_tokens": max_tokens}
    }
    return ChatOpenAI(
        model=name,
        base_url=settings.base_url,
        api_key=settings.api_key or "not-needed",  # local servers accept any key
        timeout=timeout_s or policy.timeout_s,
        max_retries=0,  # retries are ours: only retryable errors, see runtime.contracts
        temperature=policy.temperature,
        **bound,
    )


def model_set_from_settings(settings: Settings) -> ModelSet:
    """Configured roles use the OpenAI-compatible endpoint; the rest use the offline model."""
    from runtime.labels import model_label
    from runtime.offline import OfflineModel

    offline = OfflineModel()
    models: dict[str, BaseChatModel] = {}
    labels: dict[str, str] = {}
    for role in ROLES:
        name = settings.model_for(role)
        if name:
            models[role] = create_chat_model(name, role, settings)
        else:
            models[role] = offline
        labels[role] = model_label(settings, role)
    return ModelSet(
        models=models, labels=labels, structured_method=settings.structured_method, tool_choice=settings.tool_choice
    )


def default_model_set() -> ModelSet:
    return model_set_from_settings(Settings.from_env())
