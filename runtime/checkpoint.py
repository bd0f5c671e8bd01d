"""Checkpointer factory: memory (notebooks, tests), sqlite (CLI default), postgres (scale-out).

Checkpoints are deserialised strictly: only LangGraph's built-in safe types (plus LangChain
messages) are revived, so a tampered checkpoint store cannot make the runtime construct arbitrary
objects. State therefore holds plain data (dicts, lists, strings) — pydantic models are dumped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from runtime.settings import CHECKPOINTERS, Settings, SettingsError

SQLITE_FILE = "checkpoints.db"  # in the home for runs (``runtime.home``)


def strict_serializer() -> JsonPlusSerializer:
    """msgpack revival limited to LangGraph's safe built-in allowlist (no arbitrary classes)."""
    return JsonPlusSerializer(allowed_msgpack_modules=None)


@contextmanager
def open_checkpointer(
    kind: str = "memory", *, url: str | None = None, path: Path | str | None = None
) -> Iterator[BaseCheckpointSaver]:
    """Yield a ready checkpointer of ``kind``; connections are closed on exit."""
    serde = strict_serializer()
    if kind == "memory":
        yield InMemorySaver(serde=serde)
    elif kind == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        from runtime.home import home_file

        db = Path(path) if path else home_file(SQLITE_FILE)
        db.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(db), check_same_thread=False)
        try:
            saver = SqliteSaver(conn, serde=serde)
            saver.setup()
            yield saver
        finally:
            conn.close()
    elif kind == "postgres":
        if not url:
            raise SettingsError("REINS_CHECKPOINT_URL must be set when REINS_CHECKPOINT=postgres")
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection, OperationalError
        from psycopg.rows import dict_row

        try:
            conn = Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row, connect_timeout=10)
        except OperationalError:
            # The driver's message names hosts and sometimes users; say what to check instead.
            raise SettingsError("REINS_CHECKPOINT_URL: cannot connect to that PostgreSQL server") from None
        with conn:
            saver = PostgresSaver(conn, serde=serde)
            saver.setup()
            yield saver
    else:
        raise SettingsError(f"REINS_CHECKPOINT={kind!r} is not valid; allowed values: {', '.join(CHECKPOINTERS)}")


@contextmanager
def checkpointer_from_settings(settings: Settings) -> Iterator[BaseCheckpointSaver]:
    with open_checkpointer(settings.checkpoint, url=settings.checkpoint_url) as saver:
        yield saver
