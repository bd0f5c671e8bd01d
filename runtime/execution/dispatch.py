"""Claims on a paused call, kept in the thread's checkpoint: a decision is taken once, and an approved
call is recorded as *dispatched* before it runs.

A claim is a pending write on the checkpoint the pause was read from, under a task id of its own
(``reins-dispatch:<fingerprint>:<attempt>``) and a channel no graph has. LangGraph's savers
(memory, SQLite, PostgreSQL) keep the *first* write of a regular channel for a (checkpoint, task,
index) and ignore any later one: that is the compare-and-set, on the checkpoint id the racing
resumes share. Each resume writes its own token and reads the claim back; the resume whose token is
there took the decision, the others are refused. LangGraph ignores writes of a task id it did not
schedule, and a claim stays on its checkpoint: once the step's result is saved, the thread has moved
past it.

A claim names its holder (``reins.runtime.execution.claim_holder``) and starts its lease; while the call
runs, the holder renews the lease with one more write on the same checkpoint
(``reins-lease:<fingerprint>:<attempt>:<renewal>``, ``reins.runtime.execution.lease``). A reader folds the newest
renewal into the claim and classifies it live, stale or gone (``reins.policies.tools.claims``) before any rule
reads it, so every process and server worker sees the same state.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from typing import Any

from reins.policies.tools.approvals import Claim
from reins.policies.tools.claims import liveness
from reins.runtime.execution.claim_holder import holder_record, process_seen, this_holder

CHANNEL = "reins:dispatch"
PREFIX = "reins-dispatch:"
LEASE_CHANNEL = "reins:lease"
LEASE_PREFIX = "reins-lease:"


def _task_id(fingerprint: str, attempt: int) -> str:
    return f"{PREFIX}{fingerprint}:{attempt}"


def lease_task_id(fingerprint: str, attempt: int, renewal: str) -> str:
    return f"{LEASE_PREFIX}{fingerprint}:{attempt}:{renewal}"


def _seconds(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _claim(value: Any) -> Claim | None:
    if not isinstance(value, Mapping):
        return None
    try:
        holder = value.get("holder")
        return Claim(int(value["attempt"]), value["kind"], str(value["token"]), str(value.get("dispatched_at", "")),
                     str(value.get("tool", "")), dict(value.get("args") or {}),
                     dict(holder) if isinstance(holder, Mapping) else None, _seconds(value.get("renewed_at")))
    except (KeyError, TypeError, ValueError):
        return None


def claims_in(pending_writes: Iterable[Any] | None) -> dict[str, list[Claim]]:
    """The claims among a checkpoint's pending writes, by the fingerprint of the pause they answer,
    each with its lease's newest renewal (not yet classified: ``observed``)."""
    found: dict[str, list[Claim]] = {}
    renewed: dict[tuple[str, int, str], float] = {}
    released: set[tuple[str, int, str]] = set()
    for task_id, channel, value in pending_writes or ():
        task = str(task_id)
        if channel == LEASE_CHANNEL and task.startswith(LEASE_PREFIX) and isinstance(value, Mapping):
            fingerprint = task[len(LEASE_PREFIX):].split(":", 1)[0]
            key = (fingerprint, int(_seconds(value.get("attempt"))), str(value.get("token", "")))
            renewed[key] = max(renewed.get(key, 0.0), _seconds(value.get("renewed_at")))
            if value.get("released") is True:
                released.add(key)
        if channel != CHANNEL or not task.startswith(PREFIX):
            continue
        fingerprint = task[len(PREFIX):].rsplit(":", 1)[0]
        claim = _claim(value)
        if claim is not None:
            found.setdefault(fingerprint, []).append(claim)
    return {fingerprint: [replace(c, renewed_at=max(c.renewed_at, renewed.get((fingerprint, c.attempt, c.token), 0.0)),
                                  released=(fingerprint, c.attempt, c.token) in released)
                          for c in claims] for fingerprint, claims in found.items()}


def observed(claims: Mapping[str, list[Claim]], now: float | None = None) -> dict[str, list[Claim]]:
    """The claims with their state as this process sees it now: whether each holder's process is
    still there and how old its lease is (``reins.policies.tools.claims.liveness``)."""
    now = time.time() if now is None else now
    return {fingerprint: [_observe(claim, now) for claim in listed] for fingerprint, listed in claims.items()}


def _observe(claim: Claim, now: float) -> Claim:
    holder = claim.held_by()
    age = now - claim.renewed_at if holder is not None and claim.renewed_at > 0 else None
    return replace(claim, state=liveness(process_seen(holder), age, claim.released))


async def aobserved(claims: Mapping[str, list[Claim]]) -> dict[str, list[Claim]]:
    """``observed`` off the event loop (it reads ``/proc``)."""
    return await asyncio.to_thread(observed, claims) if claims else {}


def new_claim(attempt: int, kind: str, tool: str, args: Mapping[str, Any]) -> Claim:
    """A claim held by this process, its lease starting now."""
    now = datetime.now(timezone.utc)
    return Claim(attempt, kind, uuid.uuid4().hex, now.isoformat(timespec="seconds"), tool, dict(args),  # type: ignore[arg-type]
                 holder=holder_record(this_holder()), renewed_at=now.timestamp(), state="live")


def stored(claim: Claim) -> dict[str, Any]:
    """A claim as it is written (its state is a reader's, never stored)."""
    record = asdict(claim)
    for reader_only in ("state", "released"):
        record.pop(reader_only, None)
    return record


@dataclass(frozen=True)
class ReadClaims:
    """A node's request: the claims already on its pause (``reins.runtime.execution.calls`` drives it sync or async)."""

    saver: Any
    checkpoint: Mapping[str, Any]
    fingerprint: str

    def _mine(self, item: Any) -> dict[str, list[Claim]]:
        claims = claims_in(item.pending_writes if item else ()).get(self.fingerprint, [])
        return {self.fingerprint: claims} if claims else {}

    def run(self) -> list[Claim]:
        return observed(self._mine(self.saver.get_tuple(dict(self.checkpoint)))).get(self.fingerprint, [])

    async def arun(self) -> list[Claim]:
        mine = self._mine(await self.saver.aget_tuple(dict(self.checkpoint)))
        return (await aobserved(mine)).get(self.fingerprint, [])


@dataclass(frozen=True)
class TakeClaim:
    """A node's request: write ``claim`` on the pause (first write wins); True when it is this one."""

    saver: Any
    checkpoint: Mapping[str, Any]
    fingerprint: str
    claim: Claim

    def _write(self) -> tuple[dict[str, Any], list[tuple[str, Any]], str]:
        return dict(self.checkpoint), [(CHANNEL, stored(self.claim))], _task_id(self.fingerprint, self.claim.attempt)

    def _won(self, item: Any) -> bool:
        claims = claims_in(item.pending_writes if item else ()).get(self.fingerprint, [])
        return any(c.token == self.claim.token for c in claims if c.attempt == self.claim.attempt)

    def run(self) -> bool:
        self.saver.put_writes(*self._write())
        return self._won(self.saver.get_tuple(dict(self.checkpoint)))

    async def arun(self) -> bool:
        await self.saver.aput_writes(*self._write())
        return self._won(await self.saver.aget_tuple(dict(self.checkpoint)))


def thread_claims(saver: Any, config: Mapping[str, Any]) -> dict[str, list[Claim]]:
    """The claims on a thread's latest checkpoint, observed (a reader's view: the CLI, the resume check)."""
    if saver is None:
        return {}
    item = saver.get_tuple({"configurable": {**dict(config.get("configurable") or {}), "checkpoint_ns": ""}})
    return observed(claims_in(item.pending_writes if item else ()))


async def athread_claims(saver: Any, config: Mapping[str, Any]) -> dict[str, list[Claim]]:
    if saver is None:
        return {}
    item = await saver.aget_tuple({"configurable": {**dict(config.get("configurable") or {}), "checkpoint_ns": ""}})
    return await aobserved(claims_in(item.pending_writes if item else ()))
