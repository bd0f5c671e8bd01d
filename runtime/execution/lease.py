"""A claim's lease, renewed while its call runs: the sign every other process reads that it still runs.

Each renewal is one more pending write on the checkpoint the claim is on (a new task id per renewal:
LangGraph's savers keep the first write of a key, so a lease cannot be overwritten in place). The
writes stay with that checkpoint and go with it; a long call adds one small write per
``RENEW_EVERY_S``. A renewal that fails (the database is briefly away) is tried again at the next
interval: a lease lapses only after ``LEASE_S`` without one. A call that raises (its run cancelled,
Ctrl-C, a lost server) *releases* the lease: its holder says the dispatch ended without a recorded
result, so a reader offers "may already have run" at once instead of after the lease.

``Leased(lease, request)`` makes any request (``reins.runtime.execution.calls``) under its claim's lease:
sync in a daemon thread next to the call, async in a task on the same loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reins.policies.tools.claims import RENEW_EVERY_S
from reins.runtime.execution.dispatch import LEASE_CHANNEL, lease_task_id

_log = logging.getLogger(__name__)
JOIN_S = 5.0


@dataclass(frozen=True)
class Lease:
    """The lease of one claim: where it is (saver, checkpoint config), which claim it keeps live."""

    saver: Any
    checkpoint: Mapping[str, Any]
    fingerprint: str
    attempt: int
    token: str

    def _write(self, renewal: str, released: bool = False) -> tuple[dict[str, Any], list[tuple[str, Any]], str]:
        value = {"attempt": self.attempt, "token": self.token, "renewed_at": time.time(), "released": released}
        return dict(self.checkpoint), [(LEASE_CHANNEL, value)], lease_task_id(self.fingerprint, self.attempt, renewal)

    def renew(self, renewal: str, released: bool = False) -> None:
        self.saver.put_writes(*self._write(renewal, released))

    async def arenew(self, renewal: str, released: bool = False) -> None:
        await self.saver.aput_writes(*self._write(renewal, released))


def _renewals() -> str:
    """A renewal's own key: none other uses it, so a release is never dropped as a repeated write."""
    return uuid.uuid4().hex


def _renew_until(lease: Lease, stop: threading.Event, every_s: float) -> None:
    while True:
        try:
            lease.renew(_renewals())
        except Exception as error:  # noqa: BLE001 - a lost renewal is retried; the call goes on
            _log.warning("claim lease not renewed (%s); retrying", type(error).__name__)
        if stop.wait(every_s):
            return


async def _arenew_forever(lease: Lease, every_s: float) -> None:
    while True:
        try:
            await lease.arenew(_renewals())
        except Exception as error:  # noqa: BLE001
            _log.warning("claim lease not renewed (%s); retrying", type(error).__name__)
        await asyncio.sleep(every_s)


@dataclass(frozen=True)
class Leased:
    """Another request, made while ``lease`` is renewed every ``every_s`` seconds (from its start)."""

    lease: Lease
    request: Any
    every_s: float = RENEW_EVERY_S

    def run(self) -> Any:
        stop = threading.Event()
        renewer = threading.Thread(target=_renew_until, args=(self.lease, stop, self.every_s), daemon=True,
                                   name="reins-claim-lease")
        renewer.start()
        try:
            return self.request.run()
        except BaseException:
            _stop(stop, renewer)  # no renewal lands after the release
            _quietly(self.lease.renew, _renewals(), True)
            raise
        finally:
            _stop(stop, renewer)

    async def arun(self) -> Any:
        renewer = asyncio.create_task(_arenew_forever(self.lease, self.every_s), name="reins-claim-lease")
        try:
            return await self.request.arun()
        except BaseException:
            await _stopped(renewer)
            try:
                await self.lease.arenew(_renewals(), True)
            except Exception as error:  # noqa: BLE001 - unreleased, the lease lapses on its own
                _log.warning("claim lease not released (%s)", type(error).__name__)
            raise
        finally:
            await _stopped(renewer)


def _stop(stop: threading.Event, renewer: threading.Thread) -> None:
    stop.set()
    renewer.join(JOIN_S)  # at most one renewal in flight; a hung database does not hold the call


async def _stopped(renewer: asyncio.Task[Any]) -> None:
    renewer.cancel()
    await asyncio.wait([renewer])  # its end, without re-raising its cancellation here


def _quietly(write: Any, *args: Any) -> None:
    try:
        write(*args)
    except Exception as error:  # noqa: BLE001 - unreleased, the lease lapses on its own
        _log.warning("claim lease not released (%s)", type(error).__name__)
