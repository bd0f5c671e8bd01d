"""Who a turn acts for: the user id and memory scope it started with, kept in the thread.

A turn can pause (a tool approval, a skill draft review) and be resumed from another process, by
``reins resume``, the Python API or LangGraph Server, each with a context of its own (often none).
What the turn does after the pause is still done for the user who started it: ``prepare_turn``
stores the identity in the state, and every node that reads the user (its memory, its skills, its
tools) gets a runtime whose context carries it — and so do the tools it runs.
A new turn starts with the identity of its own context.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.state import TurnIdentity


def identity_of(context: Any) -> TurnIdentity:
    """The identity a context gives a turn (the context's defaults when there is none)."""
    defaults = AssistantContext.__dataclass_fields__
    return {
        "user_id": getattr(context, "user_id", None) or defaults["user_id"].default,
        "memory_scope": getattr(context, "memory_scope", None) or defaults["memory_scope"].default,
    }


def context_as_started(context: Any, identity: Mapping[str, Any] | None) -> Any:
    """``context`` with the identity the turn started with (itself when it already has it)."""
    if not identity or identity_of(context) == {key: identity.get(key) for key in TurnIdentity.__annotations__}:
        return context
    started = {key: identity[key] for key in TurnIdentity.__annotations__ if identity.get(key)}
    return replace(context, **started) if isinstance(context, AssistantContext) else AssistantContext(**started)


def _as_started(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    state = args[0] if args else kwargs.get("state")
    runtime = kwargs.get("runtime")
    if not isinstance(state, Mapping) or runtime is None:
        return kwargs
    context = context_as_started(runtime.context, state.get("identity"))
    if context is runtime.context:
        return kwargs
    # The tools a node runs get this runtime too (``reins.runtime.tools.runner.RunTool``).
    return {**kwargs, "runtime": runtime.override(context=context)}


def as_turn_user(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The node ``fn`` run for the user its turn started with (its state's ``identity``; a node
    reached by ``Send`` gets it in its payload). ``fn`` must take ``runtime`` (and ``config`` when
    it runs tools)."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def node(*args: Any, **kwargs: Any) -> Any:
            return (yield from fn(*args, **_as_started(args, kwargs)))
    else:

        @functools.wraps(fn)
        def node(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **_as_started(args, kwargs))

    return node
