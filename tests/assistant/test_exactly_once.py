"""An approved side effect runs exactly once, or after an explicit choice when a crash left it
unknown, with a real MCP server that records every execution (tests/assistant/mcp/notes_server.py):
racing resumes, a SIGKILL while the write is in flight, and resume values that must not wedge the
thread — over the CLI (SQLite checkpoints, separate processes) and the Python API."""

from __future__ import annotations

import json
import os
import signal
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
APPROVE = {"type": "approve"}


def _deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"type": value}
    return value


BAD_VALUES = {
    "a list as the type": {"type": ["approve"]},
    "5,000 levels deep": _deep(5000),
    "2 MB": {"type": "approve", "note": "x" * 2_000_000},
}


# ------------------------------------------------------------------------------------ Python API


def _graph(saver, mcp):
    from reins.graphs.assistant import build_graph
    from reins.runtime.standins.offline import OfflineModel

    return build_graph(models=OfflineModel(), checkpointer=saver, mcp_config=mcp, store=None)


@pytest.fixture
def paused(tmp_path):
    """A thread paused before ``notes__slow_note`` (SQLite checkpoints in tmp_path); yields
    (open a graph on the same database, the server's record, the database)."""
    from langchain_core.messages import HumanMessage

    from reins.runtime.persistence.checkpoint import open_checkpointer

    record, db = tmp_path / "executions.jsonl", tmp_path / "checkpoints.db"
    mcp = config(notes=stdio_server(record, slow_s=1.5))

    def opened():
        return open_checkpointer("sqlite", path=db)

    with opened() as saver:
        graph = _graph(saver, mcp)
        graph.invoke({"messages": [HumanMessage(content='use notes__slow_note on "buy milk"')]}, THREAD)
        (pause,) = open_pauses(graph, THREAD)
        assert pause["kind"] == "tool_approval" and pause["args"] == {"text": "buy milk"}
    assert executions(record) == []
    return opened, mcp, record, db


def test_two_racing_resumes_run_the_call_once_and_the_other_is_refused(paused):
    from reins.runtime.execution.user_input import DecisionTaken, ResumeRefused

    opened, mcp, record, _ = paused
    barrier, outcomes = threading.Barrier(2), []

    def resume():
        with opened() as saver:  # each its own connection: two clients of one thread
            graph = _graph(saver, mcp)
            barrier.wait()
            try:
                outcomes.append(graph.invoke(Command(resume=APPROVE), THREAD)["records"][0]["output"])
            except ResumeRefused as error:
                outcomes.append(error)

    workers = [threading.Thread(target=resume) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]
    refused = [o for o in outcomes if isinstance(o, ResumeRefused)]
    assert len(outcomes) == 2 and len(refused) == 1, outcomes
    # The loser is told the call is running and where (never to answer run_again), or, starting late,
    # that the thread no longer waits.
    assert "still running in process" in str(refused[0]) or "not waiting for a decision" in str(refused[0])
    assert "run_again" not in str(refused[0]) and "\n" not in str(refused[0])
    assert [o for o in outcomes if not isinstance(o, ResumeRefused)] == ["stored slowly: buy milk"]
    assert isinstance(refused[0], (DecisionTaken, ResumeRefused))


@pytest.mark.parametrize("value", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_a_bad_value_leaves_the_call_paused_and_answerable(paused, value):
    from reins.runtime.execution.user_input import ResumeRefused

    opened, mcp, record, _ = paused
    with opened() as saver:
        graph = _graph(saver, mcp)
        before = open_pauses(graph, THREAD)
        with pytest.raises(ResumeRefused, match="^resume refused: .*; the pause is unchanged$"):
            graph.invoke(Command(resume=value), THREAD)
        assert open_pauses(graph, THREAD) == before and executions(record) == []
        result = graph.invoke(Command(resume=APPROVE), THREAD)
    assert result["records"][0]["output"] == "stored slowly: buy milk"
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]


def test_a_decision_is_bound_to_the_call_it_names(paused):
    from reins.runtime.execution.user_input import ResumeRefused

    opened, mcp, record, _ = paused
    with opened() as saver:
        graph = _graph(saver, mcp)
        (pause,) = open_pauses(graph, THREAD)
        with pytest.raises(ResumeRefused, match="stale decision"):
            graph.invoke(Command(resume={**APPROVE, "fingerprint": "0123456789abcdef"}), THREAD)
        with pytest.raises(ResumeRefused, match="has not been dispatched"):
            graph.invoke(Command(resume={"type": "run_again"}), THREAD)
        # LangChain's HumanInTheLoopMiddleware shape, bound to this call: the edited call is what runs.
        edit = {"type": "edit", "edited_action": {"name": "notes__slow_note", "args": {"text": "oat milk"}}}
        result = graph.invoke(Command(resume={"decisions": [edit], "fingerprint": pause["fingerprint"]}), THREAD)
    assert result["records"][0]["args"] == {"text": "oat milk"}
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "oat milk"})]


_RESUME_IN_A_CHILD = """
import json, sys
from langgraph.types import Command
from reins.graphs.assistant import build_graph
from reins.runtime.persistence.checkpoint import open_checkpointer
from reins.runtime.standins.offline import OfflineModel
with open_checkpointer("sqlite", path=sys.argv[1]) as saver:
    graph = build_graph(models=OfflineModel(), checkpointer=saver, mcp_config=json.loads(sys.argv[2]), store=None)
    graph.invoke(Command(resume={"type": "approve"}), {"configurable": {"thread_id": "t1"}}, durability="sync")
"""


def _kill_when_dispatched(proc: subprocess.Popen, record: Path, timeout_s: float = 90) -> None:
    """SIGKILL the process (and its MCP server) once the server has recorded the write."""
    deadline = time.monotonic() + timeout_s
    while not executions(record):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the approved write never started"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def test_after_a_kill_mid_write_the_thread_asks_and_never_repeats_implicitly(paused):
    from reins.runtime.execution.user_input import ResumeRefused

    opened, _, record, db = paused
    mcp = config(notes=stdio_server(record, slow_s=60))  # the write stays in flight until the kill
    child = subprocess.Popen([sys.executable, "-c", _RESUME_IN_A_CHILD, str(db), json.dumps(mcp)], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    _kill_when_dispatched(child, record)
    with opened() as saver:
        graph = _graph(saver, config(notes=stdio_server(record)))
        (pause,) = open_pauses(graph, THREAD)
        assert pause["kind"] == "possibly_ran" and pause["tool"] == "notes__slow_note"
        assert pause["args"] == {"text": "buy milk"} and pause["dispatched_at"].startswith("20")
        assert [d["type"] for d in pause["allowed_decisions"]] == ["run_again", "mark_done", "skip"]
        with pytest.raises(ResumeRefused, match="already taken"):
            graph.invoke(Command(resume=APPROVE), THREAD)  # the same question is not asked again
        result = graph.invoke(Command(resume={"type": "mark_done"}), THREAD)
    assert result["records"][0]["ok"] is True
    assert result["records"][0]["output"].startswith("marked done by the user: the call was dispatched at 20")
    assert len(executions(record)) == 1  # no second execution without "run again"


# ------------------------------------------------------------------------------------ CLI


@pytest.fixture
def cli_env(monkeypatch, tmp_path):
    record = tmp_path / "executions.jsonl"
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(notes=stdio_server(record, slow_s=1.5))))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REINS_MCP_CONFIG": str(path), "REINS_CHECKPOINT": "sqlite",
           "REINS_HOME": str(tmp_path / "home")}
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL"):
        env.pop(name, None)
    return tmp_path, record, env, path


def _reins(cwd: Path, env: dict, *args: str, stdin: str | None = None, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reins.cli", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180, input=stdin)


def _pause_in_cli(cwd, env) -> str:
    paused = _reins(cwd, env, "chat", "--once", 'use notes__slow_note on "buy milk"', "--new-thread", "t1")
    assert paused.returncode == EXIT_PAUSED, paused.stderr[-2000:]
    fingerprint = json.loads(paused.stderr.split("--decision '", 1)[1].split("'", 1)[0])["fingerprint"]
    assert f"[call {fingerprint}]" in paused.stderr  # the prompt shows the call's fingerprint
    return fingerprint


def test_cli_two_racing_resumes_one_runs_one_is_refused(cli_env):
    cwd, record, env, _ = cli_env
    _pause_in_cli(cwd, env)
    command = [sys.executable, "-m", "reins.cli", "resume", "t1", "--decision", json.dumps(APPROVE)]
    procs = [subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(proc.wait(180), proc.stderr.read()) for proc in procs]
    assert sorted(code for code, _ in results) == [EXIT_OK, EXIT_BAD_INPUT], results
    (refusal,) = [err for code, err in results if code == EXIT_BAD_INPUT]
    line = refusal.strip().splitlines()[-1]
    assert line.startswith("reins: error: resume refused: ") and "Traceback" not in refusal
    # Refused at the claim, or (on a slow machine, the second process starting late) after the first
    # finished the turn: either way a clear refusal, and the write ran once.
    refusals = ("still running in process", "not waiting for a decision", "no question or approval waiting")
    assert any(why in line for why in refusals) and "run_again" not in line
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]


# The bad values as typed on the command line (json cannot write 5,000 levels: that one is spelled out).
TYPED_BAD_VALUES = {kind: "[" * 5000 + "]" * 5000 if kind == "5,000 levels deep" else json.dumps(value)
                    for kind, value in BAD_VALUES.items()}


def test_cli_bad_values_are_refused_and_a_following_approve_runs_once(cli_env):
    # One paused call takes every bad value in turn: each is refused and leaves the call paused.
    cwd, record, env, _ = cli_env
    fingerprint = _pause_in_cli(cwd, env)
    for kind, value in TYPED_BAD_VALUES.items():
        refused = _reins(cwd, env, "resume", "t1", "--decision", "-", stdin=value)
        assert refused.returncode == EXIT_BAD_INPUT, (kind, refused.stderr[-2000:])
        assert "Traceback" not in refused.stderr, kind
        assert len(refused.stderr.strip().splitlines()) == 1, kind
    stale = _reins(cwd, env, "resume", "t1", "--decision", json.dumps({**APPROVE, "fingerprint": "f" * 16}))
    assert stale.returncode == EXIT_BAD_INPUT and "stale decision" in stale.stderr
    assert executions(record) == []
    approved = _reins(cwd, env, "resume", "t1", "--decision", json.dumps({**APPROVE, "fingerprint": fingerprint}))
    assert approved.returncode == EXIT_OK, approved.stderr[-2000:]
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]


def test_cli_kill_mid_write_then_the_thread_asks_and_runs_again_only_when_told(cli_env):
    cwd, record, env, path = cli_env
    _pause_in_cli(cwd, env)
    path.write_text(json.dumps(config(notes=stdio_server(record, slow_s=60))))
    proc = subprocess.Popen([sys.executable, "-m", "reins.cli", "resume", "t1", "--decision", json.dumps(APPROVE)], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    _kill_when_dispatched(proc, record)
    path.write_text(json.dumps(config(notes=stdio_server(record))))
    asked = _reins(cwd, env, "resume", "t1")
    assert asked.returncode == EXIT_BAD_INPUT
    assert 'notes__slow_note with {"text": "buy milk"} was dispatched at 20' in asked.stderr
    assert "may already have run" in asked.stderr and '"type": "mark_done"' in asked.stderr
    again = _reins(cwd, env, "resume", "t1", "--decision", json.dumps(APPROVE))
    assert again.returncode == EXIT_BAD_INPUT and "already taken" in again.stderr
    assert len(executions(record)) == 1
    rerun = _reins(cwd, env, "resume", "t1", "--decision", '{"type": "run_again"}')
    assert rerun.returncode == EXIT_OK, rerun.stderr[-2000:]
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})] * 2
    done = _reins(cwd, env, "resume", "t1", "--decision", '{"type": "run_again"}')
    assert done.returncode != EXIT_OK and len(executions(record)) == 2
