"""A live dispatch is told from a dead one, with a real MCP server that records every execution
(tests/assistant/mcp/notes_server.py): while the approved write is held in flight (``gated_note``
waits for a gate file), every decision on it is refused with where it runs — in the same process and
from other ``reins`` processes — and the server ran it once; once its holder is killed, the call may
already have run and run again / mark done / skip are offered."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from langgraph.types import Command

from reins.cli.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_PAUSED
from reins.nodes.assistant.approval import open_pauses
from tests.assistant.mcp.servers import ROOT, config, executions, stdio_server

THREAD = {"configurable": {"thread_id": "t1"}}
ASK = 'use notes__gated_note on "buy milk"'
ONCE = [json.dumps({"tool": "gated_note", "text": "buy milk"})]
DECISIONS = ({"type": "approve"}, {"type": "run_again"}, {"type": "mark_done"}, {"type": "skip"})


def _dispatched(record: Path, alive: object, timeout_s: float = 300) -> None:
    """Wait for the server's own record of the write (the event the first dispatch is in the call)."""
    deadline = time.monotonic() + timeout_s
    while not executions(record):
        assert alive(), "the first resume ended before its write started"  # type: ignore[operator]
        assert time.monotonic() < deadline, "the approved write never started"
        time.sleep(0.05)


def _graph(saver, mcp):
    from reins.graphs.assistant import build_graph
    from reins.runtime.standins.offline import OfflineModel

    return build_graph(models=OfflineModel(), checkpointer=saver, mcp_config=mcp, store=None)


# ------------------------------------------------------------------------------------ one process


def test_while_the_first_dispatch_is_in_the_call_every_decision_is_refused_and_it_runs_once(tmp_path):
    from langchain_core.messages import HumanMessage

    from reins.runtime.execution.user_input import ResumeRefused
    from reins.runtime.persistence.checkpoint import open_checkpointer

    record, gate, db = tmp_path / "executions.jsonl", tmp_path / "gate", tmp_path / "checkpoints.db"
    mcp = config(notes=stdio_server(record, gate=gate, timeout_s=600))
    with open_checkpointer("sqlite", path=db) as saver:
        _graph(saver, mcp).invoke({"messages": [HumanMessage(content=ASK)]}, THREAD)
    outcome: list = []

    def first() -> None:
        with open_checkpointer("sqlite", path=db) as saver:  # its own connection: another client
            outcome.append(_graph(saver, mcp).invoke(Command(resume={"type": "approve"}), THREAD))

    runner = threading.Thread(target=first)
    runner.start()
    try:
        _dispatched(record, runner.is_alive)
        with open_checkpointer("sqlite", path=db) as saver:
            graph = _graph(saver, mcp)
            (pause,) = open_pauses(graph, THREAD)
            where = f"process {os.getpid()} on {socket.gethostname()}"
            assert pause["kind"] == "running" and pause["allowed_decisions"] == [] and pause["holder"] == where
            for decision in DECISIONS:
                with pytest.raises(ResumeRefused) as refused:
                    graph.invoke(Command(resume=decision), THREAD)
                line = str(refused.value)
                assert f"notes__gated_note is still running in {where}" in line, (decision, line)
                assert "run_again" not in line and "\n" not in line
            assert executions(record) == ONCE
    finally:
        gate.touch()
        runner.join(120)
    assert outcome and outcome[0]["records"][0]["output"] == "stored after the gate: buy milk"
    assert executions(record) == ONCE
    with open_checkpointer("sqlite", path=db) as saver:
        assert open_pauses(_graph(saver, mcp), THREAD) == []


# ------------------------------------------------------------------------------------ processes


@pytest.fixture
def cli_env(tmp_path):
    record, gate = tmp_path / "executions.jsonl", tmp_path / "gate"
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(notes=stdio_server(record, gate=gate, timeout_s=600))))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REINS_MCP_CONFIG": str(path), "REINS_CHECKPOINT": "sqlite",
           "REINS_HOME": str(tmp_path / "home")}
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL"):
        env.pop(name, None)
    return tmp_path, record, gate, env


def _reins(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reins.cli", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def _first_resume(cwd: Path, env: dict, record: Path) -> subprocess.Popen:
    paused = _reins(cwd, env, "chat", "--once", ASK, "--new-thread", "t1")
    assert paused.returncode == EXIT_PAUSED, paused.stderr[-2000:]
    first = subprocess.Popen([sys.executable, "-m", "reins.cli", "resume", "t1", "--decision", '{"type": "approve"}'],
                             cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    _dispatched(record, lambda: first.poll() is None)
    return first


def test_other_processes_are_told_the_call_runs_in_the_first_and_it_runs_once(cli_env):
    cwd, record, gate, env = cli_env
    first = _first_resume(cwd, env, record)
    try:
        where = f"process {first.pid} on {socket.gethostname()}"
        shown = _reins(cwd, env, "resume", "t1")
        assert shown.returncode == EXIT_BAD_INPUT, shown.stderr[-2000:]
        assert f"resume refused: notes__gated_note is still running in {where}" in shown.stderr
        listed = _reins(cwd, env, "runs", "--json")
        for decision in DECISIONS:
            refused = _reins(cwd, env, "resume", "t1", "--decision", json.dumps(decision))
            lines = refused.stderr.strip().splitlines()
            assert refused.returncode == EXIT_BAD_INPUT and len(lines) == 1, (decision, refused.stderr[-2000:])
            assert f"still running in {where}" in lines[0] and "run_again" not in lines[0], lines[0]
        assert executions(record) == ONCE
    finally:
        gate.touch()
        out, err = first.communicate(timeout=120)
    assert first.returncode == EXIT_OK, err[-2000:]
    assert "stored after the gate: buy milk" in out
    assert executions(record) == ONCE
    # While it ran, the runs list pointed at `reins resume t1` (where it runs), not at a decision.
    assert listed.returncode == EXIT_OK, listed.stderr[-2000:]
    assert [r["resume"] for r in json.loads(listed.stdout)["runs"] if r["thread_id"] == "t1"] == ["reins resume t1"]


def test_a_killed_holder_is_gone_at_once_and_the_call_may_already_have_run(cli_env):
    cwd, record, _, env = cli_env
    first = _first_resume(cwd, env, record)
    holder = first.pid
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(30)
    asked = _reins(cwd, env, "resume", "t1")
    assert asked.returncode == EXIT_BAD_INPUT
    assert "may already have run (its dispatch in process" in asked.stderr
    assert f"process {holder} on {socket.gethostname()} ended before its result was recorded" in asked.stderr
    assert '"type": "mark_done"' in asked.stderr and "(or run_again, skip)" in asked.stderr
    approve = _reins(cwd, env, "resume", "t1", "--decision", '{"type": "approve"}')
    assert approve.returncode == EXIT_BAD_INPUT and "may already have run" in approve.stderr
    skipped = _reins(cwd, env, "resume", "t1", "--decision", '{"type": "skip"}')
    # Taken (the turn goes on to its answer, which says the write was not done): not a refusal.
    assert skipped.returncode != EXIT_BAD_INPUT and "resume refused" not in skipped.stderr, skipped.stderr[-2000:]
    assert "notes__gated_note: error; skipped by the user" in skipped.stderr
    assert executions(record) == ONCE  # the kill left one execution; skip ran nothing
