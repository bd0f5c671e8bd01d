"""The ceiling a fault model allows (pure): the share of runs in which no call fails for good.

Under ``PerturbedModel`` at rate ``r`` a call draws one of six families evenly; two raise. Per call:

- under a deadline (a reviewer's): a 400 or a deadline overrun is final (r/12 each); a provider
  timeout or a connection error is retryable (r/12 each);
- elsewhere the deadline-overrun draw is a provider timeout: final r/12, retryable r/4.

A retryable failure is retried once (the role policy), and the retry draws again, so a call fails
for good with ``q = final + retryable · (final + retryable)``. With one fallback model perturbed
independently, a final failure moves to it — except a deadline overrun, which no fallback may
outlast — and the call fails only if the fallback fails too. A run needs every call, so the
ceiling is the product over its calls. Invalid output is left out: the repair may still save it.
"""

from __future__ import annotations

from reins.schemas.delivery import REVIEWER_ROLES

CHAIN_CALLS = 10  # the controlled chain's calls in a pass run at rate 0 (the evaluation pins it)
DEADLINE_CALLS = len(REVIEWER_ROLES)  # the reviews run under the reviewer deadline


def call_failure(rate: float, *, under_deadline: bool, fallback: bool) -> float:
    """The probability that one call fails for good (see the module docstring)."""
    share = rate / 12  # one kind of a raising family
    final = 2 * share if under_deadline else share
    retryable = 2 * share if under_deadline else 3 * share
    alone = final + retryable * (final + retryable)
    if not fallback:
        return alone
    deadline = (share + retryable * share) if under_deadline else 0.0
    return deadline + (alone - deadline) * alone


def chain_ceiling(rate: float, *, fallback: bool, calls: int = CHAIN_CALLS, deadline_calls: int = DEADLINE_CALLS) -> float:
    """The share of chain runs the fault model lets finish with every call answered."""
    free = (1 - call_failure(rate, under_deadline=False, fallback=fallback)) ** (calls - deadline_calls)
    return free * (1 - call_failure(rate, under_deadline=True, fallback=fallback)) ** deadline_calls
