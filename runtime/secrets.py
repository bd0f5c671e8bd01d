"""The process's secret values, snapshot from the environment for redaction by value.

``policies.redaction`` decides which variables are secrets and removes their values; this module
is the one place that reads them. The snapshot is taken when the runtime is imported and again
whenever settings are read from the environment (every CLI command, every run resolving its
models), so a key set after start-up is redacted from the next run on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from policies.redaction import SecretValues, installed_secret_values, secret_values, use_secret_values


def refresh_secret_values(environ: Mapping[str, str] | None = None) -> SecretValues:
    """Snapshot the secret values of ``environ`` (default: the process environment) and install them."""
    values = secret_values(os.environ if environ is None else environ)
    current = installed_secret_values()
    return current if current.values == values else use_secret_values(values)


refresh_secret_values()
