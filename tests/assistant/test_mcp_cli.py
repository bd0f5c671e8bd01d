"""The user's tools from the terminal: ``reins chat`` asks before a side effect, ``--once`` pauses
and ``reins resume`` answers from another process (SQLite checkpoint), ``reins doctor`` lists the
servers; the offline stand-in calls a tool the message names."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reins.cli import main
from reins.cli.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, EXIT_PAUSED
from tests.assistant.mcp.servers import ROOT, config, executions, stdio_server


@pytest.fixture
def mcp_env(monkeypatch, tmp_path):
    record = tmp_path / "executions.jsonl"
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(notes=stdio_server(record),
                                      broken=stdio_server(record, "crash", env={"API_KEY": "sk-do-not-show-123456"}))))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_MCP_CONFIG", str(path))
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path, record


def _reins(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "reins.cli", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_once_pauses_and_resume_in_a_new_process_runs_the_call_once(mcp_env):
    cwd, record = mcp_env
    paused = _reins(cwd, "chat", "--once", 'use notes__add_note on "buy milk"', "--new-thread", "t1")
    assert paused.returncode == EXIT_PAUSED, paused.stderr[-2000:]
    assert 'The assistant wants to run notes__add_note with {"text": "buy milk"}' in paused.stderr
    assert "reins resume t1 --decision" in paused.stderr and executions(record) == []
    refused = _reins(cwd, "resume", "t1", "--decision", '{"type": "edit", "args": {"txt": 1}}')
    assert refused.returncode == EXIT_BAD_INPUT
    assert "resume refused: edited args do not fit the tool's schema: args.text missing" in refused.stderr
    assert executions(record) == []
    approved = _reins(cwd, "resume", "t1", "--decision", '{"type": "approve"}')
    assert approved.returncode == EXIT_OK, approved.stderr[-2000:]
    assert "notes__add_note returned stored: buy milk" in approved.stdout
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "buy milk"})]
    again = _reins(cwd, "resume", "t1", "--decision", '{"type": "approve"}')
    assert again.returncode != EXIT_OK and len(executions(record)) == 1  # one approval, one run


def test_interactive_chat_asks_and_a_refused_decision_asks_again(mcp_env, monkeypatch, capsys):
    _, record = mcp_env
    lines = iter(['use notes__add_note on "one"', "maybe", "n not now", 'use notes__add_note on "two"', "y", "exit"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(lines))
    assert main(["chat", "--new-thread", "i1"]) == EXIT_OK
    out, err = capsys.readouterr()
    assert "decision type must be approve, reject or edit" in err, out
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "two"})]
    assert "rejected by the user: not now" in out and "stored: two" in out


def test_doctor_lists_servers_tools_and_a_broken_server_in_one_line_and_fails(mcp_env, capsys):
    assert main(["doctor", "--json"]) == EXIT_FAILED  # a configured server cannot start
    report = json.loads(capsys.readouterr().out)
    servers = {s["name"]: s for s in report["mcp_servers"]}
    assert {t["name"]: t["approval"] for t in servers["notes"]["tools"]} == {
        "notes__word_count": "run", "notes__wait_ms": "run", "notes__crash_now": "run", "notes__add_note": "ask",
        "notes__tally": "ask", "notes__slow_note": "ask", "notes__filed_note": "ask", "notes__repeat_word": "run",
        "notes__gated_note": "ask"}
    broken = servers["broken"]
    assert broken["tools"] == [] and broken["problem"] == "McpError: Connection closed"
    # Its command as typed (the path kept, a secret never) and the log holding its own output.
    assert broken["command"] == f"{sys.executable} -m tests.assistant.mcp.notes_server stdio crash"
    assert broken["log"].endswith("mcp-servers.log")
    assert {"name": "ask_user", "approval": "question"} in report["chat_tools"]
    assert {"name": "remember", "approval": "run"} in report["chat_tools"]  # not "(asks first)" any more
    assert main(["doctor"]) == EXIT_FAILED
    out = capsys.readouterr().out
    assert (f"mcp broken        cannot start: McpError: Connection closed; command: {sys.executable} -m "
            f"tests.assistant.mcp.notes_server stdio crash; its output: {broken['log']}") in out
    assert "notes__add_note (asks first)" in out and "sk-do-not-show" not in out and "Traceback" not in out
    assert "remember (asks first)" not in out and "forget (asks first)" in out and "ask_user (asks you)" in out


def test_a_broken_configuration_is_bad_input(mcp_env, monkeypatch, capsys):
    cwd, _ = mcp_env
    (cwd / "bad.json").write_text('{"mcpServers": {"a/b": {"command": "x"}}}')
    monkeypatch.setenv("REINS_MCP_CONFIG", str(cwd / "bad.json"))
    assert main(["chat", "--once", "hello"]) == EXIT_BAD_INPUT
    assert "MCP server name 'a/b' must be" in capsys.readouterr().err
    assert main(["doctor"]) == EXIT_BAD_INPUT


def test_chat_help_lists_the_tools_from_their_declarations(mcp_env, capsys):
    with pytest.raises(SystemExit) as done:
        main(["chat", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "  calculator  arithmetic, e.g. (17+25)*3" in out and "  ask_user" in out
    assert "notes__add_note  Store a note (changes the notebook). (asks first)" in out


def test_a_claude_desktop_or_cline_style_file_starts_the_chat(mcp_env, monkeypatch, capsys):
    cwd, record = mcp_env
    notes = stdio_server(record, trust_annotations=False)
    host_file = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "notes": {**notes, "autoApprove": ["add_note"], "disabled": False, "timeout": 60, "transportType": "stdio"},
            "off": {**stdio_server(record, "crash"), "disabled": True},
        },
    }
    (cwd / "claude_desktop_config.json").write_text(json.dumps(host_file))
    monkeypatch.setenv("REINS_MCP_CONFIG", str(cwd / "claude_desktop_config.json"))
    assert main(["chat", "--once", 'use notes__add_note on "from cline"', "--new-thread", "c1"]) == EXIT_OK
    out, err = capsys.readouterr()
    # autoApprove widened what runs unasked: said in one line, never silently.
    assert "MCP server 'notes': autoApprove read as trust: add_note run(s) without asking first" in err
    assert "field(s) timeout, transportType ignored" in err and "globalShortcut ignored" in err
    assert "off" not in err and "cannot start" not in err  # the disabled server is never started
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "from cline"})]
    assert main(["doctor"]) == EXIT_OK  # the only broken server is disabled
    assert "mcp off           disabled in the configuration (not started)" in capsys.readouterr().out


def test_chat_names_a_server_that_cannot_start_with_its_command_and_log(mcp_env, capsys):
    assert main(["chat", "--once", "what is 2+2?"]) == EXIT_OK  # the broken server is left out
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "'broken'" in line)
    assert line.startswith("reins: MCP server 'broken' cannot start (left out): McpError: Connection closed; command: ")
    assert f"{sys.executable} -m tests.assistant.mcp.notes_server stdio crash" in line
    assert line.endswith("mcp-servers.log") and "sk-do-not-show" not in err
    log = Path(line.rsplit("its output: ", 1)[1])
    assert "notes server: cannot open the notebook" in log.read_text()  # the server's own words are there
