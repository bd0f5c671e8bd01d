"""When a call goes to the role's next model instead of failing (pure).

A provider failure that is final for this model moves the same request to the next one: a 4xx
other than 401/403 (400, 404, 413, 422: this model or this endpoint will not take the request), a
retryable failure whose retries are spent (connection, 408, 409, 429, 5xx) and the provider's own
timeout. Never: 401/403 (a wrong key is a configuration error to show, not to hide behind another
model), the run's own deadline (a fallback would exceed it), and anything that is not a provider
failure at all (an output that fails its contract is the repair's job).

A model that is not there (connection refused, model not found) is skipped by the rest of the run's
calls (``skips_rest_of_run``). A model entry — a fallback or an escalation model — may name its own
endpoint and key variable (``parse_model_entry``), so "local server down → another server" is one
entry; a fallback list may also name the role's escalation model as ``escalate=<entry>``
(``parse_model_list``).
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
    """Whether a model whose call failed with ``cause`` (``reins.runtime.llm.failures.failure_cause``) is
    skipped by every later call of the run: it is not there (refused connection, no such model)."""
    return cause in DEAD_FOR_THE_RUN


@dataclass(frozen=True)
class ModelEntry:
    """One configured model besides a role's own (a fallback or an escalation model): a model name,
    and optionally its own endpoint and the variable holding its key (``name``,
    ``name@https://host/v1``, ``name@http://host:8080/v1#REINS_KEY_VAR``)."""

    name: str
    base_url: str | None = None
    key_variable: str | None = None


def parse_model_entry(entry: str) -> ModelEntry:
    """The entry's parts; a ``@`` followed by anything but an http(s) URL is part of the model's
    name (``claude-3@20240229``). The key variable must be a ``REINS_`` or ``OPENAI_`` variable (the
    only ones settings read). ValueError names what is wrong, never a value (a URL may hold a secret)."""
    text = entry.strip()
    name, at, rest = text.partition("@")
    if not text or "," in text or any(char.isspace() for char in text):
        raise ValueError("a model entry is one name (name, name@http(s)://host/path or name@url#KEY_VARIABLE)")
    if not at or not rest.startswith(("http://", "https://")):
        return ModelEntry(text)
    url, hash_, variable = rest.partition("#")
    if not name or len(url) <= len("https://"):
        raise ValueError("a model entry with an endpoint is name@http(s)://host/path")
    if hash_ and not _KEY_VARIABLE.match(variable):
        raise ValueError("a model entry's key variable must be a REINS_ or OPENAI_ variable name")
    return ModelEntry(name, url, variable or None)


ESCALATE_PREFIX = "escalate="  # a fallback list's entry naming the role's escalation model


@dataclass(frozen=True)
class ModelList:
    """A fallback list read: the fallbacks in order and the escalation model it names, if any."""

    fallbacks: tuple[str, ...] = ()
    escalation: str | None = None

    def entries(self) -> tuple[str, ...]:
        """Every model entry the list holds, its escalation model last."""
        return (*self.fallbacks, self.escalation) if self.escalation else self.fallbacks


def parse_model_list(value: str) -> ModelList:
    """A comma-separated fallback list: entries in order (blanks and repeats dropped), each checked by
    ``parse_model_entry``, and at most one ``escalate=<entry>``. ValueError names what is wrong."""
    fallbacks: list[str] = []
    escalations: list[str] = []
    for item in (part.strip() for part in value.split(",")):
        if item.lower().startswith(ESCALATE_PREFIX):
            escalations.append(item[len(ESCALATE_PREFIX):].strip())
        elif item:
            fallbacks.append(item)
    if len(escalations) > 1:
        raise ValueError(f"more than one {ESCALATE_PREFIX} entry (a role escalates to one model)")
    if escalations and not escalations[0]:
        raise ValueError(f"an {ESCALATE_PREFIX} entry without a model")
    for item in (*fallbacks, *escalations):
        parse_model_entry(item)
    return ModelList(tuple(dict.fromkeys(fallbacks)), escalations[0] if escalations else None)
