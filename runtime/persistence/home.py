"""One home for runs: checkpoints, the chat's long-term notes and evaluation output.

``REINS_HOME`` when set, else the platform's user data directory (``platformdirs``: e.g.
``~/.local/share/reins`` on Linux), so ``reins runs`` and ``reins resume`` find a run from any
working directory. A ``./.reins`` left by an earlier version (runs were kept per directory) is still
read when ``REINS_HOME`` is unset, with one line saying so, so nobody loses a paused run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

APP_NAME = "reins"
LEGACY_DIR = Path(".reins")  # where runs lived before REINS_HOME: the working directory's .reins
_told: set[Path] = set()


def default_home() -> Path:
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)


def legacy_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """The working directory's ``.reins`` holding runs, when ``REINS_HOME`` does not say otherwise."""
    env = os.environ if env is None else env
    if env.get("REINS_HOME", "").strip():
        return None
    return LEGACY_DIR if (LEGACY_DIR / "checkpoints.db").is_file() else None


def reins_home(env: Mapping[str, str] | None = None) -> Path:
    """Where runs live: ``REINS_HOME``, else an earlier version's ``./.reins``, else the user data dir."""
    env = os.environ if env is None else env
    configured = env.get("REINS_HOME", "").strip()
    if configured:
        return Path(configured).expanduser()
    legacy = legacy_dir(env)
    if legacy is None:
        return default_home()
    resolved = legacy.resolve()
    if resolved not in _told:  # said once per process, on stderr (stdout may be --json)
        _told.add(resolved)
        print(f"reins: note: reading runs from ./.reins, where an earlier version kept them; new installs keep "
              f"them in {default_home()} (set REINS_HOME to choose)", file=sys.stderr)
    return legacy


def home_file(name: str) -> Path:
    """A file or directory in the home (the home is created when missing)."""
    home = reins_home()
    home.mkdir(parents=True, exist_ok=True)
    return home / name
