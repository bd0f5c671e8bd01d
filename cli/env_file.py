"""``.env``: settings kept in a file in the working directory, read when ``reins`` starts.

The real environment always wins (a variable already set is never replaced), so
``REINS_MODEL=x reins …`` still overrides the file. ``langgraph dev`` reads the same file
(``"env": ".env"`` in langgraph.json). ``.env.example`` lists every variable.
"""

from __future__ import annotations

from pathlib import Path

ENV_FILE = Path(".env")


def load_env_file(path: Path | None = None) -> bool:
    """Export the file's variables the environment does not set yet; False when there is no file."""
    path = ENV_FILE if path is None else path
    if not path.is_file():
        return False
    from dotenv import load_dotenv

    return load_dotenv(path, override=False)


def env_file_status() -> str:
    return f"{ENV_FILE} (read; the environment overrides it)" if ENV_FILE.is_file() else "none"
