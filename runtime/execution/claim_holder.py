"""This process as the holder of a claim, and what a reader can tell about another claim's holder.

A pid means one process only on one machine, in one pid namespace, since one boot: ``MACHINE`` joins
the host name, the boot id and the pid namespace, so a reader in another container or on another host
says ``unknown`` (the lease decides) instead of looking up a pid that is not the holder's. The start
time of the pid guards against a pid reused after the holder died. Without ``/proc`` (not Linux) a
live pid counts as alive and the lease decides when the holder stops.
"""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from reins.policies.tools.claims import Holder, ProcessSeen

def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as source:
            return source.read(4096).strip()
    except OSError:
        return ""


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _start_time(pid: int) -> str | None:
    """When ``pid`` started (clock ticks after boot), "" when it cannot be read, None when the pid is a
    zombie or not there."""
    text = _read(f"/proc/{pid}/stat")
    if not text:
        return ""
    fields = text.rsplit(")", 1)[-1].split()  # the name in parentheses may hold spaces
    if len(fields) < 20:
        return ""
    return None if fields[0] in ("Z", "X") else fields[19]


MACHINE = "|".join((socket.gethostname(), _read("/proc/sys/kernel/random/boot_id"), _pid_namespace()))
_holders: dict[int, Holder] = {}


def this_holder() -> Holder:
    """This process as a claim's holder (computed once per pid: a forked child is another holder)."""
    pid = os.getpid()
    if pid not in _holders:
        _holders[pid] = Holder(socket.gethostname(), pid, MACHINE, _start_time(pid) or "", uuid.uuid4().hex)
    return _holders[pid]


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return True  # cannot tell: not "gone"
    return True


def process_seen(holder: Holder | None) -> ProcessSeen:
    """What this process can tell about ``holder``'s process: ``gone`` only when sure."""
    if holder is None or not holder.machine or holder.machine != MACHINE or holder.pid <= 0:
        return "unknown"
    if holder.pid == os.getpid():
        return "alive" if holder.process == this_holder().process else "gone"
    if not _pid_exists(holder.pid):
        return "gone"
    started = _start_time(holder.pid)
    if started is None or (started and holder.started and started != holder.started):
        return "gone"  # a zombie, or another process that got the pid
    return "alive"


this_holder()  # read at import, not on an event loop (LangGraph Server's blocking detector)


def holder_record(holder: Holder) -> dict[str, Any]:
    """A holder as the claim stores it (plain data: every checkpointer serialises it)."""
    return {"host": holder.host, "pid": holder.pid, "machine": holder.machine, "started": holder.started,
            "process": holder.process}
