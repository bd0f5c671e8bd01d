"""Node logic written once, run sync under ``invoke`` and async under ``ainvoke``.

A node that calls a model (or another graph, or the store) is a generator: it *yields* a request —
``Contract``, ``Text``, ``ToolTurn``, ``StoreSearch``, ``StorePut``, ``Subgraph``, optionally wrapped in
``Within(seconds, …)`` — and gets the result back at the ``yield``. A failed request is raised
at the ``yield``, so a node handles failures with an ordinary ``try``/``except``; the node returns
its state update as usual::

    def supervisor_pre(state, runtime):
        try:
            result = yield Contract("delivery.supervisor_pre", SupervisorPreDecision, messages, models)
        except ContractError:
            return {...}
        return {"pre_decision": ...}

A blocking call that is not a model's (a file read) is yielded as ``OffLoop(function, args)``.

``node(fn)`` turns such a generator into one LangGraph node with a sync function (each request made
with ``invoke_contract`` …) and an async one (``ainvoke_contract`` …). ``graph.invoke`` runs the
first; ``graph.ainvoke`` / ``astream`` and LangGraph Server run the second, so no run holds a
thread while a model answers. The contract, text and tool-turn algorithms are written the same way
(``contract_steps`` … in ``runtime/contracts/__init__.py``) and run on the same drivers (``reins.runtime.execution.driving``). A plain function is returned unchanged: nodes
that never wait on a model stay ordinary functions.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

# LangGraph's own node wrapper: it accepts a sync and an async function for one node and injects
# ``runtime`` / ``config`` like any function node (``add_node`` wraps plain functions in it too).
# Private API, imported here only (tests/runtime/test_langgraph_private_api.py fails the day it moves).
from langgraph._internal._runnable import RunnableCallable

from reins.policies.audit.guard_coverage import carry_declaration
from reins.runtime.contracts import (
    ainvoke_contract,
    ainvoke_text,
    ainvoke_tool_turn,
    invoke_contract,
    invoke_text,
    invoke_tool_turn,
)
from reins.runtime.execution import driving
from reins.runtime.execution.driving import Steps, adrive  # noqa: F401 - the async driver is this module's too
from reins.runtime.execution.deadline import DeadlineExceeded, call_cancellable, call_with_deadline, deadline_scope
from reins.runtime.llm.models import ModelSet
from reins.runtime.llm.reply_stream import streaming_reply
from reins.runtime.execution.steps import metered


# ------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class Contract:
    """A structured contract call (``invoke_contract``): the result is a ``Contracted``."""

    name: str
    schema: type
    messages: Sequence[Any]
    models: ModelSet
    mode: str = "direct"

    def run(self) -> Any:
        return invoke_contract(self.name, self.schema, self.messages, self.models, mode=self.mode)

    async def arun(self) -> Any:
        return await ainvoke_contract(self.name, self.schema, self.messages, self.models, mode=self.mode)


@dataclass(frozen=True)
class Text:
    """A free-text call (``invoke_text``): the result is a ``TextResult``."""

    name: str
    messages: Sequence[Any]
    models: ModelSet

    def run(self) -> Any:
        return invoke_text(self.name, self.messages, self.models)

    async def arun(self) -> Any:
        return await ainvoke_text(self.name, self.messages, self.models)


@dataclass(frozen=True)
class ToolTurn:
    """One native tool-calling turn (``invoke_tool_turn``): the result is a ``contracts.ToolTurn``."""

    name: str
    messages: Sequence[Any]
    models: ModelSet
    tools: Sequence[Any]
    options: Mapping[str, Any] | None = None  # bind_tools options: tool_choice, parallel_tool_calls
    more_room: bool = False  # the re-ask after a cut-off: twice the role's output bound, once

    def run(self) -> Any:
        return invoke_tool_turn(self.name, self.messages, self.models, self.tools, self.options,
                                more_room=self.more_room)

    async def arun(self) -> Any:
        return await ainvoke_tool_turn(self.name, self.messages, self.models, self.tools, self.options,
                                       more_room=self.more_room)


@dataclass(frozen=True)
class StoreSearch:
    """A search of the LangGraph store under a namespace (``search`` / ``asearch``): a list of items."""

    store: Any
    namespace: tuple[str, ...]
    limit: int = 10
    query: str | None = None  # semantic search through the store's index (items then carry a score)

    def run(self) -> list[Any]:
        return self.store.search(self.namespace, query=self.query, limit=self.limit)

    async def arun(self) -> list[Any]:
        return await self.store.asearch(self.namespace, query=self.query, limit=self.limit)


@dataclass(frozen=True)
class StorePut:
    """A write to the LangGraph store (``put`` / ``aput``)."""

    store: Any
    namespace: tuple[str, ...]
    key: str
    value: Mapping[str, Any]

    def run(self) -> None:
        self.store.put(self.namespace, self.key, dict(self.value))

    async def arun(self) -> None:
        await self.store.aput(self.namespace, self.key, dict(self.value))


@dataclass(frozen=True)
class Subgraph:
    """Run a compiled graph inside this node (``invoke`` / ``ainvoke``): LangGraph treats it as a
    subgraph — its own checkpoint namespace, its events in the parent's stream, its interrupts
    pausing the parent's thread."""

    graph: Any
    input: Any
    context: Any = None

    def run(self) -> Any:
        return self.graph.invoke(self.input, context=self.context)

    async def arun(self) -> Any:
        return await self.graph.ainvoke(self.input, context=self.context)


@dataclass(frozen=True)
class Streamed:
    """Another request whose structured answer's ``field`` streams, as it is written, as the reply's
    text on LangGraph's ``messages`` stream (``reins.runtime.llm.reply_stream``)."""

    field: str
    request: Any

    def run(self) -> Any:
        with streaming_reply(self.field):
            return self.request.run()

    async def arun(self) -> Any:
        with streaming_reply(self.field):
            return await self.request.arun()


@dataclass(frozen=True)
class OffLoop:
    """A blocking call (a file read: ``stat``, symlink resolution, ``open``): made directly under
    ``invoke``; under ``ainvoke`` in a worker thread, so the event loop never blocks (LangGraph
    Server's blocking detector refuses such calls on the loop)."""

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()

    def run(self) -> Any:
        return self.function(*self.args)

    async def arun(self) -> Any:
        return await asyncio.to_thread(self.function, *self.args)


@dataclass(frozen=True)
class Within:
    """Another request with a wall-clock deadline; past it, ``DeadlineExceeded`` (a TimeoutError).

    Async: an ``asyncio`` timeout cancels the call. Sync: a blocking call cannot be cancelled, so
    it runs under ``call_with_deadline`` and is abandoned at the deadline.
    """

    seconds: float
    request: Any
    name: str = "reins-deadline"

    def run(self) -> Any:
        return call_with_deadline(self.request.run, self.seconds, name=self.name)

    async def arun(self) -> Any:
        scope = asyncio.timeout(self.seconds)
        try:
            with deadline_scope(self.seconds):
                async with scope:
                    return await self.request.arun()
        except TimeoutError:
            if scope.expired():
                raise DeadlineExceeded(self.seconds) from None
            raise  # the call's own timeout, not this deadline


# -------------------------------------------------------------------------------------- drivers

_MODEL_CALLS = (Contract, Text, ToolTurn)


def drive(steps: Steps) -> Any:
    """Run a node's generator, making each request synchronously; return the node's update."""
    return driving.drive(steps, _run)


def _run(request: Any) -> Any:
    # A model call can hang; inside ``cancellable()`` (the CLI) Ctrl-C must end its wait.
    return call_cancellable(request.run) if isinstance(request, _MODEL_CALLS) else request.run()


def node(fn: Callable[..., Any], name: str | None = None, *, subgraph: Any = None, **bound: Any) -> Any:
    """A LangGraph node for ``fn``: sync and async functions over the same generator if ``fn``
    yields requests (its update holding what its model calls spent: ``reins.runtime.execution.steps.metered``), else
    ``fn`` itself.

    ``bound``: the node's dependencies, passed by keyword (``node(propose_step, deps=deps)``) — the
    one way every graph binds them.

    ``subgraph``: a compiled graph the node runs (passed to ``fn`` as ``graph=``). LangGraph finds
    a node's subgraph among the names its functions use, so Studio draws it (``xray``) and
    ``get_state(subgraphs=True)`` reaches into it.
    """
    fn = partial(fn, **bound) if bound else fn
    if not inspect.isgeneratorfunction(fn):
        return fn
    signature = inspect.signature(fn)
    label = name or _name_of(fn)

    if subgraph is None:

        def run_sync(*args: Any, **kwargs: Any) -> Any:
            return drive(metered(fn(*args, **kwargs)))

        async def run_async(*args: Any, **kwargs: Any) -> Any:
            return await adrive(metered(fn(*args, **kwargs)))

    else:
        signature = signature.replace(parameters=[p for p in signature.parameters.values() if p.name != "graph"])

        def run_sync(*args: Any, **kwargs: Any) -> Any:
            return drive(metered(fn(*args, graph=subgraph, **kwargs)))

        async def run_async(*args: Any, **kwargs: Any) -> Any:
            return await adrive(metered(fn(*args, graph=subgraph, **kwargs)))

    for wrapper in (run_sync, run_async):
        wrapper.__signature__ = signature  # type: ignore[attr-defined]  # runtime / config injection
        wrapper.__name__ = label
        carry_declaration(fn, wrapper)  # not __wrapped__: LangGraph finds a subgraph in the wrapper's closure
    return RunnableCallable(run_sync, run_async, name=label, trace=False)



def _name_of(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", "node")


def inline(fn: Callable[..., Any], name: str | None = None, *, edge: bool = False, **bound: Any) -> Any:
    """A node (or, with ``edge=True``, a conditional edge) for a quick, local, non-blocking
    function — rules, state shaping, small bundled files. Under ``ainvoke`` it runs on the event
    loop instead of hopping to an executor thread. ``bound``: its dependencies, as for ``node``."""
    fn = partial(fn, **bound) if bound else fn
    signature = inspect.signature(fn)
    label = name or _name_of(fn)

    async def run_async(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    run_async.__signature__ = signature  # type: ignore[attr-defined]
    run_async.__name__ = label
    # An edge is traced like LangGraph's own edges; that also gives it the run's config context
    # (stream writer), which a node receives from its task.
    return RunnableCallable(fn, run_async, name=label if not edge else None, trace=edge)
