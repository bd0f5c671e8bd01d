"""Which provider failures are transient: the same set the OpenAI SDK itself retries (pure).

Retried: no response at all (connection refused or reset, a client-side timeout) and the HTTP
statuses 408 (request timeout), 409 (conflict, e.g. a lock), 429 (rate limit) and every 5xx.
Never retried: any other 4xx (a bad request, a wrong key, an unknown model stays wrong) and a
schema-validation failure (that is what the contract's single repair is for).
"""

from __future__ import annotations

RETRYABLE_STATUSES: frozenset[int] = frozenset({408, 409, 429})


def is_retryable_status(status: int | None) -> bool:
    """True for 408, 409, 429 and 5xx; False for every other status (and for no status)."""
    if status is None:
        return False
    return status in RETRYABLE_STATUSES or 500 <= status <= 599
