"""The checkpointer's and the store's tables, created or migrated once per database under a lock.

LangGraph's savers create their tables in ``setup()``, which reads the schema version and applies
the missing migrations without a lock: N processes opening a fresh database together (N workers, N
CLI runs, or the first runs after an upgrade that adds a migration) apply the same migration twice
and fail on the migration table's key, or on a column that is already there. Here:

- PostgreSQL: ``setup()`` runs while the connection holds a session advisory lock. The lock is
  taken with ``pg_try_advisory_lock`` and a short backoff rather than a blocking
  ``pg_advisory_lock``: a waiter blocked inside a statement keeps a snapshot, and the holder's
  ``CREATE INDEX CONCURRENTLY`` waits for every older snapshot — a deadlock.
- SQLite: ``setup()`` runs on a connection of its own inside one ``BEGIN IMMEDIATE`` transaction
  (the database's write lock, waited for through the busy timeout), so it is also all or nothing.
  Python's ``executescript`` commits an open transaction first; that connection runs a script
  statement by statement instead.

A set-up that still loses a race (a process that does not take the lock: an older Reins, another
tool) is retried a few times, since the winner's tables are then there, instead of failing the run.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from reins.runtime.config.settings import SettingsError

SQLITE_BUSY_TIMEOUT_S = 30.0  # how long a connection waits for another's write lock before "database is locked"
LOCK_WAIT_S = 120.0  # how long an open waits for another process's set-up of the same database
SETUP_ATTEMPTS = 4
# One key, in PostgreSQL's per-database advisory lock space, for every Reins set-up ("reins" in ASCII).
POSTGRES_SETUP_LOCK = 0x7265696E73
_FIRST_BACKOFF_S = 0.01
_MOST_BACKOFF_S = 0.25


def _backoffs() -> Iterator[float]:
    delay = _FIRST_BACKOFF_S
    while True:
        yield delay
        delay = min(delay * 2, _MOST_BACKOFF_S)


def _lost_a_race(error: BaseException) -> bool:
    """An error a concurrent set-up of the same tables causes, which a second try does not meet."""
    if isinstance(error, sqlite3.IntegrityError):
        return True
    if isinstance(error, sqlite3.OperationalError):
        text = str(error)
        return "locked" in text or "busy" in text or "duplicate column" in text or "already exists" in text
    try:
        from psycopg import errors
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return False
    return isinstance(error, (errors.UniqueViolation, errors.DeadlockDetected, errors.SerializationFailure,
                              errors.DuplicateTable, errors.DuplicateObject, errors.LockNotAvailable))


def _gave_up(what: str) -> SettingsError:
    return SettingsError(f"{what}: could not create its tables while other processes did the same; try again")


# -- PostgreSQL ---------------------------------------------------------------------------------


def postgres_setup(conn: Any, setup: Callable[[], None], what: str) -> None:
    """Run ``setup`` (a saver's or store's ``setup``, on ``conn``) under the database's set-up lock."""
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        try:
            with _postgres_lock(conn, what):
                setup()
            return
        except Exception as error:
            if not _lost_a_race(error) or attempt == SETUP_ATTEMPTS:
                raise
            time.sleep(_FIRST_BACKOFF_S * 2**attempt)
    raise _gave_up(what)  # pragma: no cover - the loop returns or raises


@contextmanager
def _postgres_lock(conn: Any, what: str) -> Iterator[None]:
    deadline = time.monotonic() + LOCK_WAIT_S
    for delay in _backoffs():
        if _row_value(conn.execute("SELECT pg_try_advisory_lock(%s)", (POSTGRES_SETUP_LOCK,)).fetchone()):
            break
        if time.monotonic() > deadline:
            raise _gave_up(what)
        time.sleep(delay)
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (POSTGRES_SETUP_LOCK,))


async def postgres_setup_async(conn: Any, setup: Callable[[], Awaitable[None]], what: str) -> None:
    """``postgres_setup`` for an async connection and an async ``setup``."""
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        try:
            async with _postgres_lock_async(conn, what):
                await setup()
            return
        except Exception as error:
            if not _lost_a_race(error) or attempt == SETUP_ATTEMPTS:
                raise
            await asyncio.sleep(_FIRST_BACKOFF_S * 2**attempt)
    raise _gave_up(what)  # pragma: no cover


@asynccontextmanager
async def _postgres_lock_async(conn: Any, what: str) -> AsyncIterator[None]:
    deadline = time.monotonic() + LOCK_WAIT_S
    for delay in _backoffs():
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (POSTGRES_SETUP_LOCK,))
        if _row_value(await cursor.fetchone()):
            break
        if time.monotonic() > deadline:
            raise _gave_up(what)
        await asyncio.sleep(delay)
    try:
        yield
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (POSTGRES_SETUP_LOCK,))


def _row_value(row: Any) -> Any:
    """The single column of ``row``, whichever row factory the connection has."""
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


# -- SQLite -------------------------------------------------------------------------------------


class _OneTransactionConnection(sqlite3.Connection):
    """A connection whose ``executescript`` runs inside the caller's open transaction."""

    def executescript(self, script: str) -> sqlite3.Cursor:  # type: ignore[override]
        pending = ""
        for piece in script.split(";"):
            pending += piece + ";"
            if sqlite3.complete_statement(pending):  # a ';' inside a trigger or a string is not an end
                if pending.strip().strip(";").strip():
                    self.execute(pending)
                pending = ""
        if pending.strip().strip(";").strip():
            self.execute(pending)
        return self.cursor()


def sqlite_connect(path: str, **options: Any) -> sqlite3.Connection:
    """A connection that waits ``SQLITE_BUSY_TIMEOUT_S`` for another process's write lock."""
    return sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_S, **options)


def sqlite_setup(path: str, make: Callable[[sqlite3.Connection], Any], what: str) -> None:
    """Create or migrate the tables of ``make(conn)`` (a saver or store over ``conn``) in the SQLite
    file ``path`` in one exclusive write transaction, on a connection of its own."""
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        conn = sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False, factory=_OneTransactionConnection)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # cannot change inside a transaction; a no-op once set
            conn.execute("BEGIN IMMEDIATE")
            try:
                make(conn).setup()
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return
        except Exception as error:
            if not _lost_a_race(error) or attempt == SETUP_ATTEMPTS:
                raise
            time.sleep(_FIRST_BACKOFF_S * 2**attempt)
        finally:
            conn.close()
    raise _gave_up(what)  # pragma: no cover
