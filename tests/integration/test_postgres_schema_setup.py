"""Many processes open one fresh PostgreSQL database together: the checkpoint and memory tables
(pgvector index included) are created once, under an advisory lock, and no open fails (unlocked,
the savers' set-up failed on duplicate keys of the migration tables and on concurrent CREATEs)."""

from __future__ import annotations

import psycopg
import pytest

from reins.benchmarks.schema_race import fresh_postgres_database, race_opens

pytestmark = pytest.mark.integration

PROCESSES = 20


def test_twenty_processes_open_a_fresh_postgres_database_together_and_none_fails(postgres_url):
    url = fresh_postgres_database(postgres_url, "reins_schema_race")
    assert race_opens("postgres", url, PROCESSES) == []
    with psycopg.connect(url) as conn:
        for table in ("checkpoint_migrations", "store_migrations", "vector_migrations"):
            versions = [v for (v,) in conn.execute(f"select v from {table} order by v")]
            assert versions and len(versions) == len(set(versions)), table  # each migration recorded once
        assert conn.execute("select count(distinct thread_id) from checkpoints").fetchone()[0] == PROCESSES
        assert conn.execute("select count(*) from store").fetchone()[0] == PROCESSES
        assert conn.execute("select count(*) from pg_locks where locktype = 'advisory'").fetchone()[0] == 0
