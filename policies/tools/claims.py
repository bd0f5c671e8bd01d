"""Whether an approval claim is still being carried out, and what a person may answer on it (pure rules).

A claim names its *holder* (the process that took the decision: host, pid, when that process started)
and carries a *lease*: the holder renews it while the call runs, in the thread's checkpoint where
every process and every server worker reads it. A reader classifies the newest claim:

- ``live``: the holder's process is not known to be gone and the lease was renewed within
  ``LEASE_S`` seconds: the call is running (or its result is being saved). Nothing is decided on it:
  ``run_again``, ``mark_done`` and ``skip`` are refused, and a racing approval is told it is running.
- ``gone``: the holder's process verifiably ended (same machine, pid gone or reused), or the holder
  said its dispatch ended (the call raised or its run was cancelled) before the result was saved:
  the call may already have run.
- ``stale``: the lease lapsed (a holder on another machine went silent, or a claim from a Reins that
  wrote no lease): the call may already have run.

Only ``gone`` and ``stale`` offer ``run_again`` / ``mark_done`` / ``skip``. Clocks of the machines that
share a checkpointer must agree within a few seconds: a lease is read against the reader's clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

LEASE_S = 30.0  # a claim whose holder has not renewed it for this long is no longer taken as running
RENEW_EVERY_S = LEASE_S / 3  # the holder renews three times per lease: one lost write does not lapse it

Liveness = Literal["live", "stale", "gone"]
# What a reader can tell about the holder's process: ``unknown`` when it runs on another machine.
ProcessSeen = Literal["alive", "gone", "unknown"]


@dataclass(frozen=True)
class Holder:
    """The process that holds a claim. ``machine`` names where its pid means that process (host, boot,
    pid namespace); ``started`` guards against a reused pid; ``process`` is random per process."""

    host: str = ""
    pid: int = 0
    machine: str = ""
    started: str = ""
    process: str = ""

    @classmethod
    def read(cls, value: Any) -> Holder | None:
        """A stored holder (a mapping), None for a claim written without one or unreadable."""
        if not isinstance(value, Mapping):
            return None
        try:
            return cls(str(value.get("host", "")), int(value.get("pid", 0)), str(value.get("machine", "")),
                       str(value.get("started", "")), str(value.get("process", "")))
        except (TypeError, ValueError):
            return None

    def label(self) -> str:
        """Where the call runs, as a person reads it."""
        return f"process {self.pid} on {self.host or 'an unnamed host'}"


def liveness(process: ProcessSeen, lease_age_s: float | None, ended: bool = False,
             lease_s: float = LEASE_S) -> Liveness:
    """The state of a claim from what its reader saw: the holder's process, the seconds since the
    lease was last renewed (None: the claim has no lease), and whether the holder released it (its
    dispatch ended without a result). A renewal stamped ahead of the reader's clock counts as fresh:
    refusing is the safe side of a clock difference."""
    if process == "gone" or ended:
        return "gone"
    if lease_age_s is None or math.isnan(lease_age_s):
        return "stale"
    return "live" if lease_age_s <= lease_s else "stale"


def offers_recovery(state: Liveness | None) -> bool:
    """Whether a claim in ``state`` takes the answers after a possible earlier run (``run_again``,
    ``mark_done``, ``skip``): only once its holder is gone or silent (None: no claim, nothing ran)."""
    return state in ("stale", "gone")


def _when(dispatched_at: str) -> str:
    return f" at {dispatched_at}" if dispatched_at else ""


def still_running(tool: str, holder: Holder | None, dispatched_at: str, kind: str = "run") -> str:
    """The one line a decision on a live claim reads: it is running, where, and to wait."""
    where = holder.label() if holder else "another process"
    if kind == "run":
        since = f" (dispatched at {dispatched_at})" if dispatched_at else ""
        return (f"{tool} is still running in {where}{since}; wait for its result: "
                "it is not run again, marked done or skipped while it runs")
    return f"the decision on {tool} was already taken ({kind}{_when(dispatched_at)}) and {where} is carrying it out"


def why_unfinished(state: Liveness, holder: Holder | None) -> str:
    """Why a dispatched call is shown as one that may already have run."""
    if holder is None:
        return "its result was not recorded"
    if state == "gone":
        return f"its dispatch in {holder.label()} ended before its result was recorded"
    return f"{holder.label()} stopped renewing its claim before its result was recorded"
