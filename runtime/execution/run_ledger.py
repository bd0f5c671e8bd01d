"""The run's ledger: what a run has spent against the user's caps, checked before every request.

The caps are first checked against the configuration's worst case before a run starts
(``reins.runtime.execution.budget.check_caps``). The ledger is the defence in depth behind that check — and the only
one when the user lets a run start over a cap (``REINS_ALLOW_OVER_CAP=1``): before each model
request or tool call it asks ``reins.policies.audit.budget.request_refused`` whether the request, at its most
(one call, its output bound, its timeout), still fits; if not, the request is never made and
``BudgetCapReached`` names the cap. A request that goes reserves its bound until it returns, under a
lock, so parallel branches (the reviewers of a ``Send`` fan-out) cannot pass a cap together: each
branch's share is what it reserved, and a branch that finds the rest held is refused.

The ledger lives in a context variable the CLI opens around a run (``run_ledger``); LangGraph runs
each node in a copy of the caller's context, so every branch sees the same ledger. Outside a scope
nothing is checked.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from reins.policies.audit.budget import CAP_NAMES, request_refused
from reins.policies.models.second_attempt import repair_output_bound

CAP_CODE = "budget_cap"  # the stop reason and cause of a run refused by its ledger


class BudgetCapReached(RuntimeError):
    """A request refused before it was made: it would pass the user's cap ``cap``."""

    def __init__(self, cap: str, variable: str, value: float, metrics: Mapping[str, Any] | None = None):
        super().__init__(f"budget cap reached: {cap} ({variable}={value:g}); the next request was not made")
        self.cap, self.variable, self.value = cap, variable, value
        if metrics is not None:
            self.metrics = metrics


@dataclass
class RunLedger:
    """What one run used and holds (requests in flight, at their bound) against ``caps``."""

    caps: Mapping[str, float]
    variables: Mapping[str, str] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAP_NAMES, 0))
    held: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAP_NAMES, 0))
    started: float = field(default_factory=time.monotonic)
    refused: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, request: Mapping[str, float], metrics: Mapping[str, Any] | None = None) -> dict[str, float]:
        """Reserve ``request`` (its bound) or raise ``BudgetCapReached``; returns the reservation."""
        with self._lock:
            self.used["seconds"] = time.monotonic() - self.started
            cap = request_refused(self.used, self.held, request, self.caps)
            if cap is not None:
                self.refused = self.refused or cap
                raise BudgetCapReached(cap, self.variables.get(cap, cap), self.caps[cap], metrics)
            for name, value in request.items():
                if name != "seconds":
                    self.held[name] = self.held.get(name, 0) + value
            return dict(request)

    def settle(self, reservation: Mapping[str, float], spent: Mapping[str, float]) -> None:
        """Release a reservation and book what the request actually spent."""
        with self._lock:
            for name, value in reservation.items():
                if name != "seconds":
                    self.held[name] = self.held.get(name, 0) - value
            for name, value in spent.items():
                self.used[name] = self.used.get(name, 0) + value


_LEDGER: contextvars.ContextVar[RunLedger | None] = contextvars.ContextVar("reins_run_ledger", default=None)


def current_ledger() -> RunLedger | None:
    return _LEDGER.get()


@contextmanager
def run_ledger(caps: Mapping[str, float], variables: Mapping[str, str] | None = None) -> Iterator[RunLedger | None]:
    """Check every request inside against ``caps`` (no caps: nothing is checked, ``None`` is yielded)."""
    if not caps:
        yield None
        return
    ledger = RunLedger(dict(caps), dict(variables or {}))
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


def refusal_notes() -> list[str]:
    """For a report: the cap that refused a request of this run, if one did."""
    ledger = _LEDGER.get()
    if ledger is None or ledger.refused is None:
        return []
    cap = ledger.refused
    return [f"budget cap reached: {cap} ({ledger.variables.get(cap, cap)}={ledger.caps[cap]:g}); the requests "
            "after it were not made"]


def _output_tokens(result: Any) -> int:
    message = result.get("raw") if isinstance(result, dict) else result
    usage = getattr(message, "usage_metadata", None) or {}
    return int(usage.get("output_tokens", 0) or 0)


def ledgered(request: Any, policy: Any, more_room: bool, metrics: Any = None) -> Generator[Any, Any, Any]:
    """``request`` (one model request of a role under ``policy``) through the run's ledger: refused
    before it is made when its bound would pass a cap, its actual spend booked when it returns or
    fails. ``metrics``: a callable giving the call's metrics so far (carried by the refusal)."""
    ledger = _LEDGER.get()
    if ledger is None:
        return (yield request)
    bound = repair_output_bound(policy.max_tokens, policy.max_tokens_limit) if more_room else policy.max_tokens
    reservation = ledger.admit({"calls": 1, "output_tokens": bound, "seconds": float(policy.timeout_s)},
                               metrics() if callable(metrics) else None)
    result = None
    try:
        result = yield request
        return result
    finally:
        ledger.settle(reservation, {"calls": 1, "output_tokens": _output_tokens(result)})


def admit_tool_call(deadline_s: float) -> None:
    """Before a tool runs: refused (``BudgetCapReached``) when it would pass a cap — the tool-call
    cap, or the seconds cap if it ran to its deadline (``deadline_s``, its own: an MCP server's
    ``timeout_s``), as a model request is refused when its timeout would end past the cap."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.settle(ledger.admit({"tool_calls": 1, "seconds": float(deadline_s)}), {"tool_calls": 1})
