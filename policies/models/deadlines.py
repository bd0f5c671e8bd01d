"""Wall-clock limits derived from the per-role call policy (pure).

A reviewer runs under its own deadline so one slow review never holds up the run. The deadline must
leave room for everything the role's policy allows inside it: the business call and its one repair,
each tried ``1 + retries`` times (every attempt bounded by the role's per-call timeout) with the
backoff waits between attempts (``backoff·2ⁿ`` plus at most one ``backoff`` of jitter). Anything
shorter would cut off a retry the policy promises; the deadline itself is never retried.
"""

from __future__ import annotations

from reins.policies.models.retry import backoff_s

CALLS_PER_CONTRACT = 2  # the business call and its one repair


def backoff_budget_s(retries: int, backoff_initial_s: float) -> float:
    """The longest total wait between ``1 + retries`` attempts: every wait with its whole jitter."""
    return sum(backoff_s(attempt, backoff_initial_s, 1.0) for attempt in range(1, max(retries, 0) + 1))


def contract_deadline_s(
    timeout_s: float, retries: int, backoff_initial_s: float, calls: int = CALLS_PER_CONTRACT
) -> float:
    """The longest a contract may take under its role's policy: ``calls`` calls, each with its retries."""
    attempts = max(retries, 0) + 1
    return calls * (attempts * timeout_s + backoff_budget_s(retries, backoff_initial_s))
