"""``reins runs``: recent threads with graph, status and pause; ``--prune``; and the CLI's history
(every step is saved; when a run ends only its latest checkpoint stays, unless ``--keep-history``)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from reins.cli import main


@pytest.fixture
def sqlite_env(monkeypatch, tmp_path, reins_home):
    for name in ("REINS_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "REINS_CHECKPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    monkeypatch.chdir(tmp_path)
    return reins_home / "checkpoints.db"


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _checkpoints(db, thread: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (thread,)).fetchone()[0]


def test_runs_lists_graph_status_and_pause_and_durability_follows_the_graph(sqlite_env, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    assert main(["deliver", "--scenario", "request-limit-banner", "--json"]) == 0
    delivered = _json(capsys)["thread_id"]
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--json"]) == 0
    finished = _json(capsys)["thread_id"]
    monkeypatch.setattr("builtins.input", lambda *_: (_ for _ in ()).throw(EOFError()))
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review", "--json"]) == 5
    paused = _json(capsys)["thread_id"]
    assert main(["deliver", "--scenario", "request-limit-banner", "--json", "--keep-history"]) == 0
    kept = _json(capsys)["thread_id"]

    # Every step was saved; when a run ends (or pauses) only its latest checkpoint stays.
    assert _checkpoints(sqlite_env, delivered) == 1
    assert _checkpoints(sqlite_env, finished) == 1
    assert _checkpoints(sqlite_env, paused) == 1
    assert _checkpoints(sqlite_env, kept) > 10  # one per step
    with sqlite3.connect(sqlite_env) as conn:
        conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", (kept,))
        conn.execute("DELETE FROM writes WHERE thread_id = ?", (kept,))

    assert main(["runs", "--json"]) == 0
    runs = {run["thread_id"]: run for run in _json(capsys)["runs"]}
    assert list(runs) == [paused, finished, delivered]  # newest first
    assert runs[delivered] | {"updated_at": None} == {
        "thread_id": delivered, "graph": "delivery_chain", "status": "pass", "paused": False,
        "resumable": False, "updated_at": None, "resume": None,
    }
    assert runs[finished]["graph"] == "tasklist_agent" and runs[finished]["status"] == "final"
    assert runs[paused]["status"] == "paused" and runs[paused]["paused"] and runs[paused]["resumable"]
    assert runs[paused]["resume"].startswith(f"reins resume {paused} --decision")

    assert main(["runs", "--limit", "1"]) == 0
    listed = capsys.readouterr().out
    assert paused in listed and delivered not in listed and "paused" in listed

    # The paused run resumes from its checkpoint; afterwards it lists as finished.
    assert main(["resume", paused, "--decision", '{"type": "approve"}', "--json"]) in (0, 1, 5)
    capsys.readouterr()
    assert main(["runs", "--json"]) == 0
    assert {r["thread_id"]: r for r in _json(capsys)["runs"]}[paused]["status"] != "incomplete"


def test_prune_deletes_only_old_threads_and_shrinks_the_database(sqlite_env, capsys):
    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.runtime.persistence.runs import prune_runs

    threads = []
    for _ in range(3):
        assert main(["deliver", "--scenario", "request-limit-banner", "--json"]) == 0
        threads.append(_json(capsys)["thread_id"])
    size = sqlite_env.stat().st_size
    with open_checkpointer("sqlite", path=sqlite_env) as saver:
        assert prune_runs(saver, 1) == []  # nothing is a day old yet
        later = datetime.now(timezone.utc) + timedelta(days=2)
        assert sorted(prune_runs(saver, 1, now=later)) == sorted(threads)
    assert sqlite_env.stat().st_size < size
    assert main(["runs", "--json"]) == 0
    assert _json(capsys)["runs"] == []

    assert main(["deliver", "--scenario", "request-limit-banner"]) == 0
    capsys.readouterr()
    assert main(["runs", "--prune", "0", "--json"]) == 0
    assert len(_json(capsys)["pruned"]) == 1
    assert main(["runs"]) == 0
    assert capsys.readouterr().out.strip() == "no runs"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["runs", "--prune", "-3"], "--prune takes a number of days"),
        (["runs", "--prune", "nan"], "--prune takes a number of days"),
        (["runs", "--limit", "0"], "--limit must be between"),
    ],
)
def test_runs_bad_input(sqlite_env, capsys, argv, message):
    assert main([*argv, "--json"]) == 2
    assert _json(capsys)["error"]["message"].startswith(message)


def test_memory_checkpointer_keeps_no_runs(sqlite_env, capsys, monkeypatch):
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    assert main(["runs"]) == 0
    assert "REINS_CHECKPOINT=memory" in capsys.readouterr().out
