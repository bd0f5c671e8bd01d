"""The LangGraph store that holds long-term memory, by checkpointer kind, with a semantic index
where the backend can hold one (``reins.runtime.persistence.embeddings.memory_index``):

- memory: ``InMemoryStore`` with the index;
- sqlite (the CLI default, ``memory.db`` in ``REINS_HOME``): ``SqliteStore`` with the index when Python's
  ``sqlite3`` can load extensions (sqlite-vec), else without it (recall by keywords only);
- postgres (``REINS_CHECKPOINT_URL``): ``PostgresStore`` with the index when the server offers the
  pgvector extension (``vector``), else without it.

``semantic`` on the yielded ``OpenedStore`` says which one a run got.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reins.runtime.persistence.embeddings import memory_index
from reins.runtime.config.settings import Settings, SettingsError
from reins.runtime.persistence.schema import postgres_setup, sqlite_connect, sqlite_setup

MEMORY_DB = "memory.db"  # in the home for runs (``reins.runtime.persistence.home``)


@dataclass(frozen=True)
class OpenedStore:
    store: Any
    semantic: bool


def sqlite_can_index() -> bool:
    return hasattr(sqlite3.Connection, "enable_load_extension")


@contextmanager
def open_store(settings: Settings, *, path: Path | str | None = None, create: bool = True) -> Iterator[OpenedStore]:
    """Yield the store for ``settings.checkpoint`` (connections closed on exit). ``create=False`` (a
    command that only reads): a SQLite file that is not there is not created; an empty store stands in."""
    from reins.runtime.persistence.checkpoint import sqlite_file_missing

    index = memory_index()
    if settings.checkpoint == "memory" or (settings.checkpoint == "sqlite" and not create
                                           and sqlite_file_missing(path, MEMORY_DB)):
        from langgraph.store.memory import InMemoryStore

        yield OpenedStore(InMemoryStore(index=index), True)
    elif settings.checkpoint == "sqlite":
        from langgraph.store.sqlite import SqliteStore

        from reins.runtime.persistence.home import home_file

        db = Path(path) if path else home_file(MEMORY_DB)
        db.parent.mkdir(parents=True, exist_ok=True)
        semantic = sqlite_can_index()
        sqlite_setup(str(db), lambda conn: SqliteStore(conn, index=index if semantic else None), "the memory file")
        conn = sqlite_connect(str(db), check_same_thread=False, isolation_level=None)
        try:
            store = SqliteStore(conn, index=index if semantic else None)
            store.setup()  # its tables are there: this only readies the store (and loads the index extension)
            yield OpenedStore(store, semantic)
        finally:
            conn.close()
    elif settings.checkpoint == "postgres":
        with _postgres_store(settings.checkpoint_url or "", index) as opened:
            yield opened
    else:
        raise SettingsError(f"REINS_CHECKPOINT={settings.checkpoint!r} has no memory store")


@contextmanager
def _postgres_store(url: str, index: dict[str, Any]) -> Iterator[OpenedStore]:
    from langgraph.store.postgres import PostgresStore
    from psycopg import Connection, OperationalError
    from psycopg.rows import dict_row

    try:
        conn = Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row, connect_timeout=10)
    except OperationalError:
        raise SettingsError("REINS_CHECKPOINT_URL: cannot connect to that PostgreSQL server") from None
    with conn:
        semantic = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is not None
        store = PostgresStore(conn, index=index if semantic else None)
        postgres_setup(conn, store.setup, "REINS_CHECKPOINT_URL (the memory tables)")
        yield OpenedStore(store, semantic)
