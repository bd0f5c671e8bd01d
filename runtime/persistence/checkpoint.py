"""Checkpointer factory: memory (notebooks, tests), sqlite (CLI default), postgres (scale-out).

``open_checkpointer`` hands out the sync savers (``invoke``, the CLI); ``open_async_checkpointer``
the async ones (``AsyncSqliteSaver``, ``AsyncPostgresSaver``) for ``ainvoke`` / ``astream``: a sync
SQLite or PostgreSQL saver cannot serve an async run.

Checkpoints are deserialised strictly: only LangGraph's built-in safe types (plus LangChain
messages) are revived, so a tampered checkpoint store cannot make the runtime construct arbitrary
objects. State therefore holds plain data (dicts, lists, strings) — pydantic models are dumped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from reins.runtime.config.settings import CHECKPOINTERS, Settings, SettingsError

SQLITE_FILE = "checkpoints.db"  # in the home for runs (``reins.runtime.persistence.home``)


def strict_serializer() -> JsonPlusSerializer:
    """msgpack revival limited to LangGraph's safe built-in allowlist (no arbitrary classes)."""
    return JsonPlusSerializer(allowed_msgpack_modules=None)


# PostgreSQL connections as LangGraph's savers need them (the row factory is added per driver).
_POSTGRES_OPTIONS = {"autocommit": True, "prepare_threshold": 0, "connect_timeout": 10}
# The driver's message names hosts and sometimes users; say what to check instead.
_NO_POSTGRES = "REINS_CHECKPOINT_URL: cannot connect to that PostgreSQL server"


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


@contextmanager
def open_checkpointer(
    kind: str = "memory", *, url: str | None = None, path: Path | str | None = None
) -> Iterator[BaseCheckpointSaver]:
    """Yield a ready checkpointer of ``kind``; connections are closed on exit.

    Example: ``with open_checkpointer("sqlite", path="runs.db") as saver: build_delivery_chain(checkpointer=saver)``
    """
    serde = strict_serializer()
    if _checked_kind(kind, url) == "memory":
        yield InMemorySaver(serde=serde)
    elif kind == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(_sqlite_file(path), check_same_thread=False)
        try:
            saver = SqliteSaver(conn, serde=serde)
            saver.setup()
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
            saver.setup()
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

        async with aiosqlite.connect(_sqlite_file(path)) as conn:
            saver = AsyncSqliteSaver(conn, serde=serde)
            await saver.setup()
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
            await saver.setup()
            yield saver


@contextmanager
def checkpointer_from_settings(settings: Settings) -> Iterator[BaseCheckpointSaver]:
    with open_checkpointer(settings.checkpoint, url=settings.checkpoint_url) as saver:
        yield saver
