"""The role's policy on every request, whatever model serves the role.

A model Reins builds gets the policy when it is built; a model passed in (``ModelSet(models=…)``,
``with_models``, ``with_fallbacks``) would keep its own temperature, output bound and timeout. So every
call applies the policy again: for the OpenAI family as options bound on the request (merged into its
payload; the timeout is the SDK's per-request one), for other integrations as a copy of the model
with the same fields set (those read them on every request). A stand-in with none of these fields is
called as it is.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from reins.runtime.llm.models import RolePolicy

# Field names LangChain integrations use for each setting (ChatAnthropic, ChatOllama, ChatGoogle…).
_FIELDS: dict[str, tuple[str, ...]] = {
    "temperature": ("temperature",),
    "max_tokens": ("max_tokens", "num_predict", "max_output_tokens"),
    "timeout": ("default_request_timeout", "request_timeout", "timeout"),
}


def _openai_family(model: BaseChatModel) -> bool:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - langchain-openai is a dependency
        return False
    return isinstance(model, BaseChatOpenAI)


def with_role_policy(model: BaseChatModel, policy: RolePolicy) -> tuple[BaseChatModel, dict[str, Any]]:
    """``(model to call, options to bind on each request)`` carrying the role's temperature, output
    bound and timeout."""
    if _openai_family(model):
        extra = dict(getattr(model, "extra_body", None) or {})
        # A model configured to send the classic max_tokens field in the body keeps sending it there.
        bound = {"extra_body": {**extra, "max_tokens": policy.max_tokens}} if "max_tokens" in extra else {
            "max_tokens": policy.max_tokens
        }
        return model, {"temperature": policy.temperature, "timeout": policy.timeout_s, **bound}
    values = {"temperature": policy.temperature, "max_tokens": policy.max_tokens, "timeout": policy.timeout_s}
    fields = type(model).model_fields
    update = {name: values[setting] for setting, names in _FIELDS.items() for name in names if name in fields}
    return (model.model_copy(update=update) if update else model), {}
