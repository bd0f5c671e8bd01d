"""A waiter on an MCP call kept in flight across a pause reads its result only once the call has
finished. The interleaving that once recorded ``InvalidStateError: Result is not set`` as a tool's
outcome is forced here with events, not timing: a waiter arrives while the person's answer is being
handed to the server (the question's signal still set, the call still running)."""

from __future__ import annotations

import asyncio

import pytest

from reins.runtime.tools.mcp_sessions import McpSessions, ServerQuestion, SessionHost, _InFlight

SESSION = ("thread", "notes", "stdio")


async def _flight(release: asyncio.Event, result: str = "stored") -> _InFlight:
    async def call() -> str:
        await release.wait()
        return result

    return _InFlight(SESSION, asyncio.ensure_future(call()))


def _asking(flight: _InFlight) -> None:
    """The server's question as the elicitation callback leaves it: posed, a reply awaited."""
    flight.question = ServerQuestion("notes", "which folder?", {"type": "object"})
    flight.reply = asyncio.get_running_loop().create_future()
    flight.asked.set()


def test_a_waiter_woken_by_a_consumed_question_waits_for_the_result():
    # The callback took the reply and cleared the question, but the waiter's wake-up on the question's
    # signal had already fired: it must wait for the call, not read an unfinished task.
    async def scenario() -> tuple[object, list[str]]:
        release, order = asyncio.Event(), []
        flight = await _flight(release)
        flight.asked.set()  # the signal a waiter wakes on; the question itself is already gone
        sessions = McpSessions(SessionHost())
        sessions._inflight["key"] = flight
        waiter = asyncio.ensure_future(sessions._await("key", flight))
        for _ in range(20):  # loop turns, not time: the waiter wakes on the stale signal within a few
            await asyncio.sleep(0)
        assert not waiter.done(), waiter  # it waits for the call (once it read an unfinished task here)
        order.append("released")
        release.set()
        value = await waiter
        order.append("read")
        return value, order, sessions._inflight

    value, order, inflight = asyncio.run(scenario())
    assert value == "stored"
    assert order == ["released", "read"]
    assert inflight == {}  # the finished call is forgotten once read


def test_a_waiter_arriving_after_the_answer_but_before_the_server_took_it_gets_the_result():
    # The first resume handed the reply over; a second waiter (a racing resume that carries no reply of
    # its own) arrives before the server's callback has run. It is neither asked again nor failed.
    async def scenario() -> list[object]:
        release = asyncio.Event()
        flight = await _flight(release)
        _asking(flight)
        sessions = McpSessions(SessionHost())
        sessions._inflight["key"] = flight
        flight.answer({"action": "accept", "content": {"folder": "errands"}})
        second = asyncio.ensure_future(sessions._await("key", flight))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not second.done(), second  # neither asked again nor failed: it waits for the call
        release.set()
        return [await second, flight.reply.result()]

    assert asyncio.run(scenario()) == ["stored", {"action": "accept", "content": {"folder": "errands"}}]


def test_an_open_question_is_still_put_to_the_caller():
    async def scenario() -> None:
        release = asyncio.Event()
        flight = await _flight(release)
        _asking(flight)
        with pytest.raises(ServerQuestion, match="notes"):
            await McpSessions(SessionHost())._await("key", flight)
        assert not flight.task.done()  # the call keeps running while the person answers
        release.set()
        await flight.task

    asyncio.run(scenario())


def test_a_reply_can_be_handed_over_only_once():
    async def scenario() -> None:
        flight = await _flight(asyncio.Event())
        _asking(flight)
        flight.answer({"action": "decline"})
        assert flight.open_question() is None and not flight.asked.is_set()
        with pytest.raises(AssertionError):
            flight.answer({"action": "accept"})
        flight.task.cancel()

    asyncio.run(scenario())


@pytest.mark.parametrize(("error", "expected"), [
    (asyncio.InvalidStateError("Result is not set."),
     "notes__filed_note: its outcome is unknown (an internal error in Reins while waiting for it; it may have run)"),
    (RuntimeError("disk full"), "notes__filed_note failed: RuntimeError: disk full"),
    (ValueError("Bearer sk-abcdefghijklmnopqrstuvwx"), "notes__filed_note failed: ValueError: Bearer [redacted]"),
])
def test_an_internal_error_never_becomes_the_tools_recorded_outcome(error, expected):
    from reins.runtime.llm.failures import tool_failure_text

    assert tool_failure_text("notes__filed_note", error) == expected
