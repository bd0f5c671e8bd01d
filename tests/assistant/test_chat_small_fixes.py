"""Smaller defects of the chat's command line: a call declined through ``reins resume`` is the
user's decision (exit 0, not the failure code 4); Ctrl-C before any run began says so once."""

from __future__ import annotations

import json

import reins.cli.runs as runs_command
from reins.cli import main
from reins.cli.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_PAUSED


def test_declining_a_call_through_resume_is_not_a_failure(sqlite_cli, capsys):
    assert main(["chat", "--once", "remember that I deploy on Fridays"]) == EXIT_OK
    assert main(["chat", "--new-thread", "f1", "--once", "forget the deploy day"]) == EXIT_PAUSED
    capsys.readouterr()
    decision = {"type": "reject", "reason": "keep it"}
    assert main(["resume", "f1", "--decision", json.dumps(decision)]) == EXIT_OK
    assert "[not run: you declined" in capsys.readouterr().out


def test_ctrl_c_before_a_run_says_interrupted_once(monkeypatch, capsys):
    def stopped(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(runs_command, "run", stopped)
    assert main(["runs"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "reins: interrupted\n"
