"""When a call goes to the role's next model instead of failing (pure).

A provider failure that is final for this model moves the same request to the next one: a 4xx
other than 401/403 (400, 404, 413, 422: this model or this endpoint will not take the request), a
retryable failure whose retries are spent (connection, 408, 409, 429, 5xx) and the provider's own
timeout. Never: 401/403 (a wrong key is a configuration error to show, not to hide behind another
model), the run's own deadline (a fallback would exceed it), and anything that is not a provider
failure at all (an output that fails its contract is the repair's job).
"""

from __future__ import annotations

AUTH_STATUSES: frozenset[int] = frozenset({401, 403})


def falls_back(status: int | None, *, retryable: bool, deadline: bool) -> bool:
    """``status``: the HTTP status of the failure (None without a response); ``retryable``: a
    transient provider failure (its retries already spent); ``deadline``: the run's own deadline."""
    if deadline or status in AUTH_STATUSES:
        return False
    if status is not None and 400 <= status <= 499:
        return True
    return retryable
