"""Which provider failures are transient: the same set the OpenAI SDK itself retries (pure).

Retried: no response at all (connection refused or reset, a client-side timeout) and the HTTP
statuses 408 (request timeout), 409 (conflict, e.g. a lock), 429 (rate limit) and every 5xx.
Never retried: any other 4xx (a bad request, a wrong key, an unknown model stays wrong) and a
schema-validation failure (that is what the contract's single repair is for).

Between attempts the wait grows exponentially with up to one initial backoff of jitter, so many
clients retrying the same outage do not come back in lockstep.
"""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parsedate_to_datetime

RETRYABLE_STATUSES: frozenset[int] = frozenset({408, 409, 429})


def is_retryable_status(status: int | None) -> bool:
    """True for 408, 409, 429 and 5xx; False for every other status (and for no status)."""
    if status is None:
        return False
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def backoff_s(attempt: int, initial_s: float, jitter_draw: float) -> float:
    """The wait before the next attempt after attempt number ``attempt`` (1-based) failed:
    ``initial·2^(attempt-1)`` plus ``jitter_draw`` (a draw from [0, 1]) times ``initial`` of jitter."""
    return max(0.0, initial_s * 2 ** (attempt - 1) + initial_s * jitter_draw)


def retry_after_s(headers: Mapping[str, str], now_epoch_s: float) -> float | None:
    """How long a provider asked the client to wait (``retry-after-ms``, or ``retry-after`` in
    seconds or as an HTTP date), or None when it did not say (or said something unreadable)."""
    lowered = {key.lower(): value for key, value in headers.items()}
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        value = lowered.get("retry-after", "").strip()
        if not value:
            return None
        if value.replace(".", "", 1).isdigit():
            return float(value)
        return max(0.0, parsedate_to_datetime(value).timestamp() - now_epoch_s)
    except (TypeError, ValueError, OverflowError):
        return None


def retry_wait_s(backoff: float, retry_after: float | None, room_s: float) -> float | None:
    """The wait before the next attempt: the backoff, or longer when the provider asked for longer;
    None when that wait does not fit in ``room_s`` (what is left of the deadline, or one call's
    timeout when the run has none): then the failure is final rather than a wait past the deadline."""
    wait = max(backoff, retry_after or 0.0)
    return wait if wait < room_s else None
