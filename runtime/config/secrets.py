"""The process's secret values, read from the environment for redaction by value.

``reins.policies.text.redaction`` decides which variables are secrets and removes their values; this module
is the one place that reads them. The values are read when the runtime is imported, and before
every later use the environment is compared with the one they were read from (a dictionary
comparison, no decoding): a key put into ``os.environ`` at any time — after import, between two
runs, by a notebook cell — is redacted from the next string on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from reins.policies.text.redaction import (
    SecretValues,
    installed_secret_values,
    keep_secret_values_current,
    secret_values,
    use_secret_values,
)

_read_from: dict[object, object] | None = None  # the environment the installed values come from


def refresh_secret_values(environ: Mapping[str, str] | None = None) -> SecretValues:
    """Read the secret values of ``environ`` (default: the process environment) and install them."""
    values = secret_values(os.environ if environ is None else environ)
    current = installed_secret_values()
    return current if current.values == values else use_secret_values(values)


def _environment_now() -> Mapping[object, object]:
    data = getattr(os.environ, "_data", None)  # CPython's encoded mapping: compared without decoding
    return data if isinstance(data, dict) else dict(os.environ)


def _refresh_when_changed() -> None:
    global _read_from
    now = _environment_now()
    if now == _read_from:
        return
    _read_from = dict(now)  # first: refreshing uses the installed values, which runs this check again
    refresh_secret_values()


_refresh_when_changed()
keep_secret_values_current(_refresh_when_changed)
