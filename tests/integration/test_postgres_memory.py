"""The assistant's long-term memory in PostgreSQL's store: `reins chat` remembers in one process and
recalls in another with --memory-scope user; the semantic index is used exactly when the server
offers pgvector (Debian's bookworm packages do not ship it: there, recall is by keywords)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from runtime.memory_store import open_store
from runtime.settings import Settings
from tests.integration.conftest import requires_postgres

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _chat(args: list[str], url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REINS_CHECKPOINT": "postgres", "REINS_CHECKPOINT_URL": url}
    for name in ("REINS_MODEL", "REINS_EMBEDDINGS"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "cli", "chat", *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def _pgvector_offered(url: str) -> bool:
    with psycopg.connect(url) as conn:
        return conn.execute("select 1 from pg_available_extensions where name = 'vector'").fetchone() is not None


@requires_postgres
def test_reins_chat_remembers_in_postgres_across_processes(postgres_url):
    user = "pg-memory-user"
    first = _chat(["--user", user, "--once", "remember that I deploy on Fridays"], postgres_url)
    assert first.returncode == 0, first.stderr
    recalled = _chat(["--user", user, "--memory-scope", "user", "--once", "when do I deploy?"], postgres_url)
    assert recalled.returncode == 0 and "Fridays" in recalled.stdout.splitlines()[1]  # after the stand-in notice
    listed = _chat(["--user", user, "--memory"], postgres_url)
    assert listed.stdout.count("I deploy on Fridays") == 1


@requires_postgres
def test_the_store_indexes_notes_exactly_when_pgvector_is_offered(postgres_url):
    settings = Settings(checkpoint="postgres", checkpoint_url=postgres_url)
    with open_store(settings) as opened:
        assert opened.semantic is _pgvector_offered(postgres_url)
        namespace = ("assistant-memory", "pg-index-user", "shared")
        opened.store.put(namespace, "n1", {"text": "I deploy on Fridays", "kind": "remembered",
                                           "created_at": "2026-01-01T00:00:00+00:00"})
        hits = opened.store.search(namespace, query="deployments", limit=3)
        assert [hit.key for hit in hits] == ["n1"]
        scored = hits[0].score is not None
        assert scored is opened.semantic  # a score comes only from the vector index
