"""When a call goes to the role's next model instead of failing (pure).

A provider failure that is final for this model moves the same request to the next one: a 4xx
other than 401/403 (400, 404, 413, 422: this model or this endpoint will not take the request), a
retryable failure whose retries are spent (connection, 408, 409, 429, 5xx) and the provider's own
timeout. Never: 401/403 (a wrong key is a configuration error to show, not to hide behind another
model), the run's own deadline (a fallback would exceed it), and anything that is not a provider
failure at all (an output that fails its contract is the repair's job).

A model that is not there (connection refused, model not found) is skipped by the rest of the run's
calls (``skips_rest_of_run``). A fallback entry may name its own endpoint and key variable
(``parse_fallback``), so "local server down → another server" is one entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

AUTH_STATUSES: frozenset[int] = frozenset({401, 403})


def falls_back(status: int | None, *, retryable: bool, deadline: bool) -> bool:
    """``status``: the HTTP status of the failure (None without a response); ``retryable``: a
    transient provider failure (its retries already spent); ``deadline``: the run's own deadline."""
    if deadline or status in AUTH_STATUSES:
        return False
    if status is not None and 400 <= status <= 499:
        return True
    return retryable


# A primary that failed like this is skipped for the rest of the run (it will not come back within it).
DEAD_FOR_THE_RUN: frozenset[str] = frozenset({"connection refused", "connection failed", "model not found"})
_KEY_VARIABLE = re.compile(r"^(REINS|OPENAI)_[A-Z0-9_]{1,64}$")


def skips_rest_of_run(cause: str) -> bool:
    """Whether a model whose call failed with ``cause`` (``runtime.failures.failure_cause``) is
    skipped by every later call of the run: it is not there (refused connection, no such model)."""
    return cause in DEAD_FOR_THE_RUN


@dataclass(frozen=True)
class FallbackEntry:
    """One entry of a fallback list: a model name, and optionally its own endpoint and the variable
    holding its key (``name``, ``name@https://host/v1``, ``name@http://host:8080/v1#REINS_KEY_VAR``)."""

    name: str
    base_url: str | None = None
    key_variable: str | None = None


def parse_fallback(entry: str) -> FallbackEntry:
    """The entry's parts; a ``@`` followed by anything but an http(s) URL is part of the model's
    name (``claude-3@20240229``). The key variable must be a ``REINS_`` or ``OPENAI_`` variable (the
    only ones settings read). ValueError names what is wrong, never a value."""
    name, at, rest = entry.strip().partition("@")
    if not at or not rest.startswith(("http://", "https://")):
        return FallbackEntry(entry.strip())
    url, hash_, variable = rest.partition("#")
    if not name.strip() or len(url) <= len("https://"):
        raise ValueError("a fallback entry with an endpoint is name@http(s)://host/path")
    if hash_ and not _KEY_VARIABLE.match(variable):
        raise ValueError("a fallback entry's key variable must be a REINS_ or OPENAI_ variable name")
    return FallbackEntry(name.strip(), url, variable or None)
