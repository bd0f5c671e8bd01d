"""Checkpointer factory: memory (notebooks, tests), sqlite (CLI default), postgres (scale-out).

``open_checkpointer`` hands out the sync savers (``invoke``, the CLI); ``open_async_checkpointer``
the async ones (``AsyncSqliteSaver``, ``AsyncPostgresSaver``) for ``ainvoke`` / ``astream``: a sync
SQLite or PostgreSQL saver cannot serve an async run.

Checkpoints are deserialised strictly: only LangGraph's built-in safe types (plus LangChain
messages) are revived, so a tampered checkpoint store cannot make the runtime construct arbitrary
objects. State therefore holds plain data (dicts, lists, strings) — pydantic models are dumped.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from reins.runtime.config.settings import CHECKPOINTERS, Settings, SettingsError
from reins.runtime.persistence.schema import (
    SQLITE_BUSY_TIMEOUT_S,
    postgres_setup,
    postgres_setup_async,
    sqlite_connect,
    sqlite_setup,
)

SQLITE_FILE = "checkpoints.db"  # in the home for runs (``reins.runtime.persistence.home``)


def strict_serializer() -> JsonPlusSerializer:
    """msgpack revival limited to LangGraph's safe built-in allowlist (no arbitrary classes)."""
    return JsonPlusSerializer(allowed_msgpack_modules=None)


# PostgreSQL connections as LangGraph's savers need them (the row factory is added per driver).
_POSTGRES_OPTIONS = {"autocommit": True, "prepare_threshold": 0, "connect_timeout": 10}
# The driver's message names hosts and sometimes users; say what to check instead.
_NO_POSTGRES = "REINS_CHECKPOINT_URL: cannot connect to that PostgreSQL server"
_POSTGRES_TABLES = "REINS_CHECKPOINT_URL (the checkpoint tables)"
_SQLITE_TABLES = "the checkpoint file"


def _checked_kind(kind: str, url: str | None) -> str:
    if kind not in CHECKPOINTERS:
        raise SettingsError(f"REINS_CHECKPOINT={kind!r} is not valid; allowed values: {', '.join(CHECKPOINTERS)}")
    if kind == "postgres" and not url:
        raise SettingsError("REINS_CHECKPOINT_URL must be set when REINS_CHECKPOINT=postgres")
    return kind


def _sqlite_file(path: Path | str | None) -> str:
    """The SQLite file: ``path``, else the one in the home for runs (``reins.runtime.persistence.home``)."""
    from reins.runtime.persistence.home import home_file

    db = Path(path) if path else home_file(SQLITE_FILE)
    db.parent.mkdir(parents=True, exist_ok=True)
    return str(db)


def sqlite_file_missing(path: Path | str | None, name: str = SQLITE_FILE) -> bool:
    """Whether the SQLite file (``path``, else ``name`` in the home) is not there yet; creates nothing."""
    from reins.runtime.persistence.home import reins_home

    return not (Path(path) if path else reins_home() / name).exists()


@contextmanager
def open_checkpointer(
    kind: str = "memory", *, url: str | None = None, path: Path | str | None = None, create: bool = True
) -> Iterator[BaseCheckpointSaver]:
    """Yield a ready checkpointer of ``kind``; connections are closed on exit. ``create=False`` (a
    command that only reads): a SQLite file that is not there is not created; an empty saver stands
    in for it, holding no run.

    Example: ``with open_checkpointer("sqlite", path="runs.db") as saver: build_delivery_chain(checkpointer=saver)``
    """
    serde = strict_serializer()
    if _checked_kind(kind, url) == "memory" or (kind == "sqlite" and not create and sqlite_file_missing(path)):
        yield InMemorySaver(serde=serde)
    elif kind == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        db = _sqlite_file(path)
        sqlite_setup(db, SqliteSaver, _SQLITE_TABLES)
        conn = sqlite_connect(db, check_same_thread=False)
        try:
            saver = SqliteSaver(conn, serde=serde)
            saver.setup()  # its tables are there: this only readies the saver
            yield saver
        finally:
            conn.close()
    else:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection, OperationalError
        from psycopg.rows import dict_row

        try:
            conn = Connection.connect(url, row_factory=dict_row, **_POSTGRES_OPTIONS)
        except OperationalError:
            raise SettingsError(_NO_POSTGRES) from None
        with conn:
            saver = PostgresSaver(conn, serde=serde)
            postgres_setup(conn, saver.setup, _POSTGRES_TABLES)
            yield saver


@asynccontextmanager
async def open_async_checkpointer(
    kind: str = "memory", *, url: str | None = None, path: Path | str | None = None
) -> AsyncIterator[BaseCheckpointSaver]:
    """Yield a ready checkpointer of ``kind`` for async runs (``ainvoke``, ``astream``); connections
    are closed on exit.

    Example: ``async with open_async_checkpointer("sqlite", path="runs.db") as saver: await build_delivery_chain(checkpointer=saver).ainvoke(inputs, config)``
    """
    serde = strict_serializer()
    if _checked_kind(kind, url) == "memory":
        yield InMemorySaver(serde=serde)
    elif kind == "sqlite":
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        from langgraph.checkpoint.sqlite import SqliteSaver

        db = _sqlite_file(path)
        await asyncio.to_thread(sqlite_setup, db, SqliteSaver, _SQLITE_TABLES)  # the same tables as the sync saver's
        async with aiosqlite.connect(db, timeout=SQLITE_BUSY_TIMEOUT_S) as conn:
            saver = AsyncSqliteSaver(conn, serde=serde)
            await saver.setup()  # its tables are there: this only readies the saver
            yield saver
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg import AsyncConnection, OperationalError
        from psycopg.rows import dict_row

        try:
            conn = await AsyncConnection.connect(url, row_factory=dict_row, **_POSTGRES_OPTIONS)
        except OperationalError:
            raise SettingsError(_NO_POSTGRES) from None
        async with conn:
            saver = AsyncPostgresSaver(conn, serde=serde)
            await postgres_setup_async(conn, saver.setup, _POSTGRES_TABLES)
            yield saver


@contextmanager
def checkpointer_from_settings(settings: Settings, *, create: bool = True) -> Iterator[BaseCheckpointSaver]:
    with open_checkpointer(settings.checkpoint, url=settings.checkpoint_url, create=create) as saver:
        yield saver
