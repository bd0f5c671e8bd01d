"""Many processes open one fresh SQLite database together: each creates or migrates the checkpoint
and memory tables under the database's write lock, so none fails (the savers' own set-up, unlocked,
applied the same migration twice: a duplicate key or column)."""

from __future__ import annotations

import sqlite3

from reins.benchmarks.schema_race import race_opens
from reins.runtime.persistence.checkpoint import open_checkpointer
from reins.runtime.persistence.schema import _OneTransactionConnection, sqlite_setup

PROCESSES = 20


def test_twenty_processes_open_a_fresh_sqlite_home_together_and_none_fails(tmp_path):
    assert race_opens("sqlite", str(tmp_path), PROCESSES) == []
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        assert conn.execute("select count(*) from store").fetchone()[0] == PROCESSES  # every note written is there
        versions = [v for (v,) in conn.execute("select v from store_migrations order by v")]
    assert versions == list(range(len(versions))) and versions  # each migration recorded once
    with open_checkpointer("sqlite", path=tmp_path / "checkpoints.db") as saver:
        assert len({item.config["configurable"]["thread_id"] for item in saver.list(None)}) == PROCESSES


def test_a_script_runs_inside_the_open_transaction():
    conn = sqlite3.connect(":memory:", isolation_level=None, factory=_OneTransactionConnection)
    conn.execute("BEGIN IMMEDIATE")
    conn.executescript("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a;b');\n"
                       "CREATE TRIGGER keep AFTER INSERT ON t BEGIN SELECT 1; END;")
    assert conn.in_transaction  # Python's own executescript would have committed here
    conn.execute("ROLLBACK")
    assert conn.execute("select count(*) from sqlite_master").fetchone()[0] == 0  # all of it rolled back


def test_a_set_up_that_fails_leaves_no_half_made_tables(tmp_path):
    class HalfMigrated:
        def __init__(self, conn):
            self.conn = conn

        def setup(self):
            self.conn.executescript("CREATE TABLE first (v INTEGER); CREATE TABLE second (v INTEGER);")
            raise RuntimeError("migration 2 is broken")

    db = str(tmp_path / "x.db")
    try:
        sqlite_setup(db, HalfMigrated, "the test file")
    except RuntimeError as error:
        assert str(error) == "migration 2 is broken"  # not a race: not retried, raised as it is
    else:
        raise AssertionError("the failed set-up was not reported")
    with sqlite3.connect(db) as conn:
        assert conn.execute("select name from sqlite_master").fetchall() == []


def test_a_set_up_that_loses_a_race_is_tried_again_and_the_run_goes_on(tmp_path):
    tries: list[int] = []

    class RacedOnce:  # another process, one that takes no lock, recorded the same migration first
        def __init__(self, conn):
            self.conn = conn

        def setup(self):
            tries.append(1)
            self.conn.execute("CREATE TABLE IF NOT EXISTS migrations (v INTEGER PRIMARY KEY)")
            if len(tries) == 1:
                raise sqlite3.IntegrityError("UNIQUE constraint failed: migrations.v")
            self.conn.execute("INSERT INTO migrations VALUES (0)")

    db = str(tmp_path / "x.db")
    sqlite_setup(db, RacedOnce, "the test file")
    assert len(tries) == 2
    with sqlite3.connect(db) as conn:
        assert conn.execute("select v from migrations").fetchall() == [(0,)]
