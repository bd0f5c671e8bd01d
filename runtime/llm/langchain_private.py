"""The LangChain names Reins reads that LangChain does not publish, each read here and nowhere else:
the day LangChain moves or renames one, ``tests/runtime/test_langgraph_private_api.py`` fails (not a
user's run), and the rest of the project only calls the functions below.

- ``init_chat_model``'s own provider table (``provider:model`` names and the package each needs);
- the callback handler LangChain checks for before it streams a provider's answer;
- the context variable holding the enclosing run's config (read without ``ensure_config``'s copy of
  its callback manager, and set for the calls made inside a block).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any


def chat_model_providers() -> Mapping[str, tuple[str, ...]]:
    """``init_chat_model``'s provider table: provider → (its module, …)."""
    from langchain.chat_models.base import _BUILTIN_PROVIDERS

    return _BUILTIN_PROVIDERS


def is_streaming_handler(handler: Any) -> bool:
    """The handler streams answers (LangGraph's messages stream, ``astream_events``)."""
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    return isinstance(handler, _StreamingCallbackHandler)


def current_config() -> Mapping[str, Any]:
    """The enclosing run's config as it is (empty outside any run)."""
    from langchain_core.runnables.config import var_child_runnable_config

    return var_child_runnable_config.get() or {}


@contextmanager
def config_within(config: Mapping[str, Any]) -> Iterator[None]:
    """Inside: ``config`` is the enclosing run's config for every call made."""
    from langchain_core.runnables.config import var_child_runnable_config

    token = var_child_runnable_config.set(dict(config))  # type: ignore[arg-type]
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
