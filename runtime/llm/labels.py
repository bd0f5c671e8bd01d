"""What a model is called — in ``reins doctor``, reports and traces — from its configured name
alone: no client is built, so showing the configuration loads no provider library."""

from __future__ import annotations

from reins.policies.models.fallback import parse_model_entry
from reins.runtime.config.settings import Settings

OFFLINE_LABEL = "offline (rule-based stand-in)"


def provider_of(name: str) -> str | None:
    """The LangChain provider a ``provider:model`` name asks for (``anthropic:claude-…``), or None for
    a plain name, which means the OpenAI-compatible endpoint (``qwen2.5:7b`` is a plain name)."""
    prefix, colon, _ = name.partition(":")
    if not colon:
        return None  # a plain name: LangChain's provider table is not even loaded
    from reins.runtime.llm.langchain_private import chat_model_providers  # init_chat_model's own provider table

    return prefix if prefix in chat_model_providers() else None


def describe_model(name: str) -> str:
    """The label of a configured model name: ``provider:model`` as given, else the endpoint's kind."""
    return name if provider_of(name) else f"openai-compatible:{name}"


def model_label(settings: Settings, role: str) -> str:
    name = settings.model_for(role)
    return describe_model(name) if name else OFFLINE_LABEL


def entry_label(entry: str) -> str:
    """A model entry's label (a fallback or an escalation model): its model, and the host of its own
    endpoint when it has one."""
    parsed = parse_model_entry(entry)
    if parsed.base_url is None:
        return describe_model(parsed.name)
    host = parsed.base_url.split("://", 1)[1].split("/", 1)[0].rpartition("@")[2]  # never userinfo
    return f"{describe_model(parsed.name)}@{host}"
