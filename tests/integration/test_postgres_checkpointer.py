"""Both pipelines checkpoint to a real PostgreSQL server; a paused run resumes from another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from reins.runtime.persistence.checkpoint import open_checkpointer
from reins.runtime.config.tracing import run_config

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
REINS = [sys.executable, "-m", "reins.cli"]


def _reins(args: list[str], url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REINS_CHECKPOINT": "postgres", "REINS_CHECKPOINT_URL": url}
    env.pop("REINS_MODEL", None)
    return subprocess.run(
        [*REINS, *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )


def _checkpoint_rows(url: str, thread_id: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("select count(*) from checkpoints where thread_id = %s", (thread_id,)).fetchone()[0]


def test_paused_tasklist_run_resumes_from_another_process(postgres_url):
    first = _reins(["tasklist", "docs://versions/v0.2.0-ready.md", "--review", "--json"], postgres_url)
    assert first.returncode == 5, first.stderr  # paused for the strategy review
    paused = json.loads(first.stdout)
    assert paused["paused"] is True
    assert paused["pending_review"]["kind"] == "strategy_review"
    assert paused["artifact"] is None
    thread_id = paused["thread_id"]
    assert _checkpoint_rows(postgres_url, thread_id) > 0

    refused = _reins(["resume", thread_id, "--decision", '{"type": "ship-it"}', "--json"], postgres_url)
    assert refused.returncode == 2
    assert _reins(["resume", thread_id, "--decision", '{"type": "approve"}', "--json"], postgres_url).returncode in (0, 1)
    again = _reins(["resume", thread_id, "--decision", '{"type": "approve"}', "--json"], postgres_url)
    assert again.returncode == 2, "a finished run cannot be resumed twice"

    with open_checkpointer("postgres", url=postgres_url) as saver:
        from reins.graphs.tasklist_agent import build_graph

        values = build_graph(checkpointer=saver, human_review=True).get_state(run_config("tasklist_agent", thread_id=thread_id)).values
    assert values["final_decision"] in ("final", "final_with_manual_review_items")
    assert values["artifact"]["metadata"]["validated"] is True
    steps = [entry.get("step") or entry.get("action") for entry in values["trace"]]
    assert len(steps) == len(values["trace"]) and steps  # one continuous trace across both processes


def test_delivery_chain_runs_with_the_postgres_checkpointer(postgres_url):
    from reins.graphs.delivery_chain import build_graph

    config = run_config("delivery_chain", thread_id="delivery-pg-1")
    with open_checkpointer("postgres", url=postgres_url) as saver:
        result = build_graph(checkpointer=saver).invoke(
            {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}, config
        )
        stored = build_graph(checkpointer=saver).get_state(config).values
    assert result["run_status"] == "pass"
    assert stored["run_status"] == "pass"
    assert stored["report"] == result["report"]
    assert _checkpoint_rows(postgres_url, "delivery-pg-1") > 3


def test_every_graph_under_ainvoke_with_the_async_postgres_saver(postgres_url):
    import asyncio

    from reins.runtime.persistence.checkpoint import open_async_checkpointer
    from tests.runtime.test_async_checkpointers import check, run_every_graph

    async def main():
        async with open_async_checkpointer("postgres", url=postgres_url) as saver:
            return type(saver).__name__, await run_every_graph(saver)

    name, outcome = asyncio.run(main())
    assert name == "AsyncPostgresSaver"
    check(outcome)
    assert _checkpoint_rows(postgres_url, "async-delivery") > 3


def test_a_finished_cli_run_keeps_only_its_latest_checkpoint_in_postgres(postgres_url):
    done = _reins(["deliver", "--scenario", "request-limit-banner", "--json"], postgres_url)
    assert done.returncode == 0, done.stderr
    assert _checkpoint_rows(postgres_url, json.loads(done.stdout)["thread_id"]) == 1
    kept = _reins(["deliver", "--scenario", "request-limit-banner", "--json", "--keep-history"], postgres_url)
    assert _checkpoint_rows(postgres_url, json.loads(kept.stdout)["thread_id"]) > 3
