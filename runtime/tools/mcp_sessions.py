"""One MCP session per server per chat, reused across calls, on a thread of its own.

Every MCP file and process operation (a stdio server's start, its log file, an HTTP connection)
happens on one host thread with its own event loop, never on the caller's: a graph run under
LangGraph Server keeps its event loop free (its blocking-call detector stays quiet), and ``invoke``,
``ainvoke`` and a notebook's loop all reach the same sessions.

A session is opened by ``langchain-mcp-adapters`` (``MultiServerMCPClient.session``) at a chat's first
call to that server and kept for the chat — the run's thread id (a resume in the same process finds
it again; a resume elsewhere opens a new one). It is closed when the chat ends (``close_scope``),
after ``IDLE_S`` without a call, or when the process exits. A call that fails below the protocol (a
crashed server, a lost connection) drops the session, so the next call starts the server afresh.

A server's question mid-call (elicitation) arrives *inside* the running call, while a LangGraph pause
ends the node that waits for it (the resume re-runs the node). So the call is kept running here, on
the host, under its key (the run's thread and the node's task, the same when the node re-runs): the
caller gets ``ServerQuestion`` at once, the node pauses with it, and the re-run node finds the call
still in flight, hands the person's reply to the waiting server and awaits the same call's result —
the call is dispatched once. A resume in another process finds no such call: the reply cannot reach
it (``QuestionLost``), and nothing is dispatched again.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from reins.runtime.tools.mcp_config import ServerSpec
from reins.runtime.execution.deadline import DeadlineExceeded

IDLE_S = 600.0  # a chat's session idle this long is closed (the next call opens a new one)
MAX_SESSIONS = 16  # past this many open sessions, the least recently used is closed
CLOSE_WAIT_S = 5.0
ANSWERS_KEPT = 256  # answered calls remembered, so a late racing answer is told it was taken
NO_THREAD = ""  # the scope of calls made outside a thread (a graph without a checkpointer)
T = TypeVar("T")

# Extra ``_meta`` for the next MCP call in this context (e.g. an idempotency key); None for none.
call_meta: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar("reins_mcp_call_meta",
                                                                                       default=None)
# The next MCP call's key (stable when its node re-runs after a pause), and the reply to the question
# that call is waiting on ({action, content}, policies.tools.elicitation), when there is one.
call_key: contextvars.ContextVar[str | None] = contextvars.ContextVar("reins_mcp_call_key", default=None)
question_reply: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar("reins_mcp_reply",
                                                                                           default=None)


class ServerQuestion(Exception):
    """The call is waiting for the person's answer to its server's question (it keeps running)."""

    def __init__(self, server: str, message: str, schema: Mapping[str, Any] | None) -> None:
        super().__init__(f"the MCP server {server!r} asks a question")
        self.server, self.message, self.schema = server, message, dict(schema or {})


class QuestionTaken(Exception):
    """A second reply to a question another resume answered first."""


class QuestionLost(Exception):
    """A reply for a call that is no longer waiting here (another process asked, or it ended)."""


@dataclass
class _InFlight:
    """A call kept running across its node's pause: its task, and the question it waits on."""

    session: tuple[str, str, str]
    task: asyncio.Task[Any]
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    question: ServerQuestion | None = None
    reply: asyncio.Future[Any] | None = None

    def open_question(self) -> ServerQuestion | None:
        """The question the server waits on, while no reply has been handed to it."""
        if self.question is None or self.reply is None or self.reply.done():
            return None
        return self.question

    def answer(self, reply: Mapping[str, Any]) -> None:
        """Hand the person's reply to the waiting server. The question is consumed here, at once: a
        waiter that looks before the server has taken the reply sees no question and waits for the
        call's result."""
        assert self.reply is not None and not self.reply.done()
        self.reply.set_result(dict(reply))
        self.asked.clear()


class SessionHost:
    """A daemon thread running an event loop that owns every MCP session of the process."""

    def __init__(self, on_start: Callable[[], None] | None = None) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._on_start = on_start

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                started: Future[asyncio.AbstractEventLoop] = Future()
                threading.Thread(target=self._serve, args=(started,), name="reins-mcp", daemon=True).start()
                self._loop = started.result()
            return self._loop

    def _serve(self, started: Future[asyncio.AbstractEventLoop]) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        if self._on_start is not None:  # e.g. open the servers' log file: on this thread, never the caller's loop
            self._on_start()
        started.set_result(loop)
        loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop())

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the host from any event loop (cancelling the wait cancels it there)."""
        return await asyncio.wrap_future(self.submit(coro))

    def run_blocking(self, coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
        """Wait for ``coro`` from synchronous code; past ``timeout_s`` it is cancelled
        (``DeadlineExceeded``)."""
        future = self.submit(coro)
        try:
            return future.result(timeout_s)
        except FutureTimeout:
            future.cancel()
            raise DeadlineExceeded(timeout_s) from None


@dataclass
class _Held:
    session: Any  # mcp.ClientSession
    closed: asyncio.Event
    task: asyncio.Task[None]
    opened_at: float
    last_used: float
    calls: int = 0


@dataclass
class McpSessions:
    """The open sessions, keyed by (scope, server, its connection); touched only on the host's loop."""

    host: SessionHost
    idle_s: float = IDLE_S
    _held: dict[tuple[str, str, str], _Held] = field(default_factory=dict)
    _opening: dict[tuple[str, str, str], asyncio.Future[_Held]] = field(default_factory=dict)
    _reaper: asyncio.Task[None] | None = None
    _inflight: dict[str, _InFlight] = field(default_factory=dict)
    # Calls whose question a resume answered here (the latest ANSWERS_KEPT): a racing second answer that
    # arrives once the call has ended is refused as taken, not mistaken for a call lost to a restart.
    _answered: dict[str, None] = field(default_factory=dict)
    opened: int = 0  # sessions opened since the process started (tests and benchmarks read it)

    # ------------------------------------------------------------------ on the host loop

    async def _hold(self, key: tuple[str, str, str], spec: ServerSpec, ready: asyncio.Future[_Held]) -> None:
        from langchain_mcp_adapters.client import MultiServerMCPClient

        from langchain_mcp_adapters.callbacks import Callbacks

        closed = asyncio.Event()
        client = MultiServerMCPClient({spec.name: dict(spec.connection)},  # type: ignore[dict-item]
                                      callbacks=Callbacks(on_elicitation=partial(self._elicited, key, spec.name)))
        try:
            async with client.session(spec.name) as session:
                now = time.monotonic()
                ready.set_result(_Held(session, closed, asyncio.current_task(), now, now))  # type: ignore[arg-type]
                await closed.wait()
        except BaseException as error:  # noqa: BLE001 - a server that dies or will not start
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else ConnectionError("MCP session ended"))
        finally:
            held = self._held.get(key)
            if held is not None and held.closed is closed:
                del self._held[key]

    async def _session(self, scope: str, spec: ServerSpec) -> _Held:
        key = _key(scope, spec)
        held = self._held.get(key)
        if held is not None and not held.task.done():
            return held
        if key not in self._opening:  # concurrent calls of one step wait for the same start
            ready: asyncio.Future[_Held] = asyncio.get_running_loop().create_future()
            self._opening[key] = ready
            task = asyncio.create_task(self._hold(key, spec, ready), name=f"mcp-{spec.name}")
            try:
                held = await asyncio.wait_for(asyncio.shield(ready), spec.startup_timeout_s)
            except BaseException:
                task.cancel()
                raise
            finally:
                del self._opening[key]
            self._held[key] = held
            self.opened += 1
            for stale, old in sorted(self._held.items(), key=lambda item: item[1].last_used)[:-MAX_SESSIONS]:
                self._held.pop(stale, None)
                old.closed.set()
            self._start_reaper()
            return held
        return await asyncio.shield(self._opening[key])

    async def _elicited(self, session: tuple[str, str, str], server: str, mcp_context: Any, params: Any,
                        context: Any) -> Any:
        """The server's question: handed to the one call in flight on that session, answered when
        the person's reply arrives (a question no single call can own is cancelled)."""
        from mcp.types import ElicitResult

        del mcp_context, context
        waiting = [f for f in self._inflight.values() if f.session == session and not f.task.done()]
        schema = getattr(params, "requestedSchema", None)
        if len(waiting) != 1 or schema is None:  # parallel calls on one session, or a URL request
            return ElicitResult(action="cancel")
        flight = waiting[0]
        flight.reply = asyncio.get_running_loop().create_future()
        flight.question = ServerQuestion(server, str(getattr(params, "message", "")), schema)
        flight.asked.set()
        try:
            return ElicitResult(**(await flight.reply))
        finally:
            flight.question, flight.reply = None, None
            flight.asked.clear()

    async def _await(self, key: str | None, flight: _InFlight) -> Any:
        """The call's result once its task has finished, or ``ServerQuestion`` while the server waits
        for the person's answer. A waiter woken by a question that was answered meanwhile (its reply
        being handed over) waits on: it never reads the result of a task that has not finished."""
        while not flight.task.done():
            if (question := flight.open_question()) is not None:
                raise ServerQuestion(question.server, question.message, question.schema)
            flight.asked.clear()  # no open question: a signal still set is stale (its answer is on its way)
            asked = asyncio.ensure_future(flight.asked.wait())
            try:
                await asyncio.wait({flight.task, asked}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                flight.task.cancel()  # the caller gave up (its deadline): so does the call
                raise
            finally:
                asked.cancel()
        if key is not None:
            self._inflight.pop(key, None)
        return flight.task.result()

    async def _call(self, scope: str, spec: ServerSpec, name: str, args: Mapping[str, Any],
                    meta: Mapping[str, Any] | None, key: str | None = None,
                    reply: Mapping[str, Any] | None = None) -> Any:
        for stale in [k for k, f in self._inflight.items() if f.task.done() and k != key]:
            del self._inflight[stale]  # ended without anyone awaiting it (its session closed meanwhile)
        flight = self._inflight.get(key) if key is not None else None
        if flight is not None:  # the node re-runs after its pause: the same call, never a new one
            if reply is not None:
                if flight.reply is None or flight.reply.done():
                    raise QuestionTaken("the server's question was answered already (by another resume)")
                flight.answer(reply)
                self._answered[key] = None
                while len(self._answered) > ANSWERS_KEPT:
                    del self._answered[next(iter(self._answered))]
            return await self._await(key, flight)
        if reply is not None and key in self._answered:
            raise QuestionTaken("the server's question was answered already (by another resume)")
        if reply is not None:
            raise QuestionLost("the call that asked is not running here any more (the process restarted or it "
                               "ended); it was not sent again and may have partly run")
        held = await self._session(scope, spec)
        held.last_used = time.monotonic()
        held.calls += 1
        flight = _InFlight(_key(scope, spec), asyncio.ensure_future(
            self._dispatch(scope, spec, held, name, args, meta)))
        if key is not None:
            self._inflight[key] = flight
            self._answered.pop(key, None)  # a new call under this key: its questions are new ones
        return await self._await(key, flight)

    async def _dispatch(self, scope: str, spec: ServerSpec, held: _Held, name: str, args: Mapping[str, Any],
                        meta: Mapping[str, Any] | None) -> Any:
        try:
            return await held.session.call_tool(name, dict(args), meta=dict(meta) if meta else None)
        except asyncio.CancelledError:
            raise
        except Exception:  # below the protocol: this session is gone, the next call opens a new one
            held.closed.set()
            self._held.pop(_key(scope, spec), None)
            raise
        finally:
            held.last_used = time.monotonic()

    def _start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.create_task(self._reap())

    async def _reap(self) -> None:
        while self._held:
            await asyncio.sleep(min(30.0, self.idle_s))
            now = time.monotonic()
            for key, held in list(self._held.items()):
                if now - held.last_used >= self.idle_s:
                    self._held.pop(key, None)
                    held.closed.set()

    async def _close(self, scope: str | None) -> int:
        chosen = [(key, held) for key, held in self._held.items() if scope is None or key[0] == scope]
        for key, held in chosen:
            self._held.pop(key, None)
            held.closed.set()
        if chosen:
            await asyncio.wait([held.task for _, held in chosen], timeout=CLOSE_WAIT_S)
        return len(chosen)

    async def _stats(self) -> dict[tuple[str, str], int]:
        return {key[:2]: held.calls for key, held in self._held.items()}

    # ------------------------------------------------------------------ from anywhere

    async def call(self, scope: str, spec: ServerSpec, name: str, args: Mapping[str, Any]) -> Any:
        """Call ``name`` on the scope's session with ``spec``'s server (opened on first use)."""
        return await self.host.run(self._call(scope, spec, name, args, call_meta.get(), call_key.get(),
                                              question_reply.get()))

    def answered(self, key: str) -> bool:
        """Whether a resume in this process already answered the question of the call with this key."""
        return key in self._answered

    def waiting(self, key: str) -> bool:
        """Whether the call with this key is in flight here, waiting for the person's answer."""
        flight = self._inflight.get(key)
        return flight is not None and flight.question is not None and not flight.task.done()

    def close_scope(self, scope: str) -> int:
        """Close a chat's sessions (its servers stop); the number closed."""
        return self._closing(scope)

    def close_all(self) -> int:
        """Close every session (at exit): a server already gone is not news then."""
        logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)
        return self._closing(None)

    def _closing(self, scope: str | None) -> int:
        if self.host._loop is None:  # nothing was ever opened
            return 0
        try:
            return self.host.run_blocking(self._close(scope), CLOSE_WAIT_S + 1)
        except (DeadlineExceeded, RuntimeError):
            return 0

    def open_sessions(self) -> dict[tuple[str, str], int]:
        """(scope, server) → calls made on it, for every open session."""
        if self.host._loop is None:
            return {}
        return self.host.run_blocking(self._stats(), CLOSE_WAIT_S)


def _key(scope: str, spec: ServerSpec) -> tuple[str, str, str]:
    """A session is the chat's and the server's as configured (another configuration under the same
    name is another server)."""
    return scope, spec.name, json.dumps(dict(spec.connection), sort_keys=True, default=str)


def scope_of(config: Mapping[str, Any] | None) -> str:
    """The chat a call belongs to: its run's thread id."""
    configurable = (config or {}).get("configurable") or {}
    return str(configurable.get("thread_id") or NO_THREAD)


def pooled_call(sessions: McpSessions, spec: ServerSpec) -> Callable[..., Awaitable[Any]]:
    """A ``langchain-mcp-adapters`` tool interceptor: the call goes to the chat's session instead of
    a session opened for this one call (the adapters' default)."""
    from langchain_core.runnables import ensure_config

    async def intercept(request: Any, handler: Callable[..., Awaitable[Any]]) -> Any:
        del handler  # never a fresh per-call session
        return await sessions.call(scope_of(ensure_config()), spec, request.name, request.args)

    return intercept
