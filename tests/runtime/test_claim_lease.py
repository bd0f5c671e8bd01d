"""runtime/execution/{claim_holder,dispatch,lease}.py: a claim's holder and lease as another reader
sees them — renewed while the call runs, released when it raises or is cancelled, and classified live,
stale or gone from the holder's process and the lease's age."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from dataclasses import replace

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from reins.policies.tools.claims import LEASE_S
from reins.runtime.execution.claim_holder import MACHINE, holder_record, process_seen, this_holder
from reins.runtime.execution.dispatch import TakeClaim, claims_in, new_claim, observed
from reins.runtime.execution.lease import Lease, Leased

FP = "0123456789abcdef"


def _checkpoint() -> tuple[InMemorySaver, dict]:
    saver = InMemorySaver()
    config = saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {})
    return saver, config


def _claims(saver: InMemorySaver, config: dict) -> list:
    return claims_in(saver.get_tuple(config).pending_writes)[FP]


def _exited_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(30)
    return child.pid


def test_a_claim_is_live_stale_or_gone_from_its_holder_and_its_lease():
    mine = new_claim(1, "run", "notes__add_note", {"text": "milk"})
    now = mine.renewed_at
    elsewhere = replace(mine, holder={**mine.holder, "machine": "another-host|boot|pid:[9]", "pid": 1})
    dead = replace(mine, holder={**mine.holder, "pid": _exited_pid(), "process": "someone-else"})
    cases = {
        "this process, renewed now": (mine, now, "live"),
        "this process, silent past the lease": (mine, now + LEASE_S + 1, "stale"),
        "another machine, renewed now": (elsewhere, now + 1, "live"),
        "another machine, silent past the lease": (elsewhere, now + LEASE_S + 1, "stale"),
        "this machine, its process exited, lease fresh": (dead, now, "gone"),
        "released by its holder": (replace(mine, released=True), now, "gone"),
        "written without a holder (an older Reins)": (replace(mine, holder=None), now, "stale"),
    }
    seen = {name: observed({FP: [claim]}, now=at)[FP][0].state for name, (claim, at, _) in cases.items()}
    assert seen == {name: state for name, (_, _, state) in cases.items()}


def test_what_this_process_can_tell_about_a_holder():
    me = this_holder()
    assert me.machine == MACHINE and process_seen(me) == "alive"
    assert process_seen(replace(me, process="a-previous-life")) == "gone"  # this pid, another process
    assert process_seen(replace(me, pid=_exited_pid(), process="x")) == "gone"
    assert process_seen(replace(me, machine="elsewhere")) == "unknown"
    assert process_seen(None) == "unknown"
    assert holder_record(me)["pid"] == me.pid


class CountingSaver(InMemorySaver):
    """Counts the lease's writes; ``reached`` is set at the ``wanted``-th."""

    def __init__(self, wanted: int) -> None:
        super().__init__()
        self.renewals, self.wanted, self.reached = 0, wanted, threading.Event()

    def put_writes(self, config, writes, task_id, task_path=""):
        super().put_writes(config, writes, task_id, task_path)
        if str(task_id).startswith("reins-lease:"):
            self.renewals += 1
            if self.renewals >= self.wanted:
                self.reached.set()


class Waits:
    """A call that returns once ``event`` is set (the lease's renewals set it), or raises ``error``."""

    def __init__(self, event: threading.Event, error: BaseException | None = None) -> None:
        self.event, self.error = event, error

    def run(self) -> str:
        assert self.event.wait(30), "the lease was not renewed while the call ran"
        if self.error is not None:
            raise self.error
        return "done"


def _taken(saver) -> tuple[dict, Lease]:
    config = saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {})
    claim = new_claim(1, "run", "notes__add_note", {"text": "milk"})
    assert TakeClaim(saver, config, FP, claim).run()
    return config, Lease(saver, config, FP, claim.attempt, claim.token)


def test_the_lease_is_renewed_while_the_call_runs_and_stops_with_it():
    saver = CountingSaver(wanted=3)
    config, lease = _taken(saver)
    started = time.time()
    assert Leased(lease, Waits(saver.reached), every_s=0.001).run() == "done"
    after = saver.renewals
    (claim,) = _claims(saver, config)
    assert after >= 3 and claim.renewed_at >= started and not claim.released
    assert observed({FP: [claim]})[FP][0].state == "live"  # the result is being saved: still live
    # No renewal after the call returned: its renewer was stopped and joined.
    assert Leased(lease, Waits(_set()), every_s=3600).run() == "done"
    assert saver.renewals == after + 1  # that second call's one renewal at its start, nothing from the first


def _set() -> threading.Event:
    event = threading.Event()
    event.set()
    return event


def test_a_call_that_raises_releases_its_lease_so_the_claim_is_gone_at_once():
    saver = CountingSaver(wanted=1)
    config, lease = _taken(saver)
    with pytest.raises(KeyboardInterrupt):
        Leased(lease, Waits(saver.reached, KeyboardInterrupt()), every_s=0.001).run()
    (claim,) = _claims(saver, config)
    assert claim.released and observed({FP: [claim]})[FP][0].state == "gone"


def test_a_cancelled_async_call_releases_its_lease():
    saver, config = _checkpoint()
    claim = new_claim(1, "run", "notes__add_note", {"text": "milk"})
    assert TakeClaim(saver, config, FP, claim).run()
    lease = Lease(saver, config, FP, claim.attempt, claim.token)

    class Hangs:
        def __init__(self) -> None:
            self.inside = asyncio.Event()

        async def arun(self) -> str:
            self.inside.set()
            await asyncio.Event().wait()  # until cancelled
            return "never"

    async def scenario() -> None:
        call = Hangs()
        task = asyncio.create_task(Leased(lease, call, every_s=0.001).arun())
        await call.inside.wait()
        (renewing,) = claims_in((await saver.aget_tuple(config)).pending_writes)[FP]
        assert not renewing.released
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    (after,) = _claims(saver, config)
    assert after.released and observed({FP: [after]})[FP][0].state == "gone"
