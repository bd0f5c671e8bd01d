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
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from reins.policies.approvals import Claim

CHANNEL = "reins:dispatch"
PREFIX = "reins-dispatch:"


def _task_id(fingerprint: str, attempt: int) -> str:
    return f"{PREFIX}{fingerprint}:{attempt}"


def _claim(value: Any) -> Claim | None:
    if not isinstance(value, Mapping):
        return None
    try:
        return Claim(int(value["attempt"]), value["kind"], str(value["token"]), str(value.get("dispatched_at", "")),
                     str(value.get("tool", "")), dict(value.get("args") or {}))
    except (KeyError, TypeError, ValueError):
        return None


def claims_in(pending_writes: Iterable[Any] | None) -> dict[str, list[Claim]]:
    """The claims among a checkpoint's pending writes, by the fingerprint of the pause they answer."""
    found: dict[str, list[Claim]] = {}
    for task_id, channel, value in pending_writes or ():
        if channel != CHANNEL or not str(task_id).startswith(PREFIX):
            continue
        fingerprint = str(task_id)[len(PREFIX):].rsplit(":", 1)[0]
        claim = _claim(value)
        if claim is not None:
            found.setdefault(fingerprint, []).append(claim)
    return found


def new_claim(attempt: int, kind: str, tool: str, args: Mapping[str, Any]) -> Claim:
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return Claim(attempt, kind, uuid.uuid4().hex, now, tool, dict(args))  # type: ignore[arg-type]


@dataclass(frozen=True)
class ReadClaims:
    """A node's request: the claims already on its pause (``reins.runtime.execution.calls`` drives it sync or async)."""

    saver: Any
    checkpoint: Mapping[str, Any]
    fingerprint: str

    def run(self) -> list[Claim]:
        item = self.saver.get_tuple(dict(self.checkpoint))
        return claims_in(item.pending_writes if item else ()).get(self.fingerprint, [])

    async def arun(self) -> list[Claim]:
        item = await self.saver.aget_tuple(dict(self.checkpoint))
        return claims_in(item.pending_writes if item else ()).get(self.fingerprint, [])


@dataclass(frozen=True)
class TakeClaim:
    """A node's request: write ``claim`` on the pause (first write wins); True when it is this one."""

    saver: Any
    checkpoint: Mapping[str, Any]
    fingerprint: str
    claim: Claim

    def _write(self) -> tuple[dict[str, Any], list[tuple[str, Any]], str]:
        return dict(self.checkpoint), [(CHANNEL, asdict(self.claim))], _task_id(self.fingerprint, self.claim.attempt)

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
    """The claims on a thread's latest checkpoint (a reader's view: the CLI, the resume check)."""
    if saver is None:
        return {}
    item = saver.get_tuple({"configurable": {**dict(config.get("configurable") or {}), "checkpoint_ns": ""}})
    return claims_in(item.pending_writes if item else ())


async def athread_claims(saver: Any, config: Mapping[str, Any]) -> dict[str, list[Claim]]:
    if saver is None:
        return {}
    item = await saver.aget_tuple({"configurable": {**dict(config.get("configurable") or {}), "checkpoint_ns": ""}})
    return claims_in(item.pending_writes if item else ())
