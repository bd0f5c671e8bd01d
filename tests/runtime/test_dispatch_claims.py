"""runtime/execution/dispatch.py: a claim on a paused checkpoint is a compare-and-set on the saver's own
writes — the first claim of an attempt wins, a later one with another token loses, and the claims
are read back by the pause's fingerprint (memory and SQLite savers, sync and async)."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from reins.runtime.persistence.checkpoint import open_async_checkpointer, open_checkpointer
from reins.runtime.execution.dispatch import ReadClaims, TakeClaim, claims_in, new_claim, thread_claims


def _paused_checkpoint(saver):
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    return saver.put(config, empty_checkpoint(), {"source": "loop", "step": 1}, {})


async def _apaused_checkpoint(saver):
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    return await saver.aput(config, empty_checkpoint(), {"source": "loop", "step": 1}, {})


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_first_claim_of_an_attempt_wins_and_the_others_lose(kind, tmp_path):
    with open_checkpointer(kind, path=tmp_path / "c.db") as saver:
        where = _paused_checkpoint(saver)
        first, second = (new_claim(1, "run", "notes__add_note", {"text": t}) for t in ("a", "b"))
        assert TakeClaim(saver, where, "fp1", first).run() is True
        assert TakeClaim(saver, where, "fp1", second).run() is False  # same attempt: taken
        assert TakeClaim(saver, where, "fp2", second).run() is True  # another pause: its own claim
        again = new_claim(2, "run", "notes__add_note", {"text": "a"})
        assert TakeClaim(saver, where, "fp1", again).run() is True  # an explicit second attempt
        claims = ReadClaims(saver, where, "fp1").run()
        assert sorted((c.attempt, c.token) for c in claims) == [(1, first.token), (2, again.token)]
        assert claims[0].args == {"text": "a"} and claims[0].dispatched_at.startswith("20")
        assert set(thread_claims(saver, {"configurable": {"thread_id": "t1"}})) == {"fp1", "fp2"}
        assert thread_claims(saver, {"configurable": {"thread_id": "nobody"}}) == {}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_claims_under_async_savers(kind, tmp_path):
    async def scenario():
        async with open_async_checkpointer(kind, path=tmp_path / "c.db") as saver:
            where = await _apaused_checkpoint(saver)
            first, second = (new_claim(1, "run", "t", {}) for _ in range(2))
            won = await asyncio.gather(TakeClaim(saver, where, "fp", first).arun(),
                                       TakeClaim(saver, where, "fp", second).arun())
            assert sorted(won) == [False, True]
            assert len(await ReadClaims(saver, where, "fp").arun()) == 1

    asyncio.run(scenario())


def test_only_reins_claims_are_read_from_pending_writes():
    claim = {"attempt": 1, "kind": "run", "token": "x", "dispatched_at": "", "tool": "t", "args": {}}
    writes = [("task-1", "messages", ["hi"]), ("reins-dispatch:fp:1", "reins:dispatch", claim),
              ("reins-dispatch:fp:2", "reins:dispatch", {"broken": True}), ("other", "reins:dispatch", claim)]
    assert list(claims_in(writes)) == ["fp"] and [c.token for c in claims_in(writes)["fp"]] == ["x"]
