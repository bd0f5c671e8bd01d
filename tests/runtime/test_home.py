"""One home for runs: ``REINS_HOME`` (else the platform's data directory) holds checkpoints and eval
output, so ``runs`` and ``resume`` work from any directory; an earlier version's ``./.reins`` is read."""

from __future__ import annotations

import json

import pytest

from reins.cli import main
from reins.runtime.persistence import home as home_module
from reins.runtime.persistence.home import reins_home


@pytest.fixture
def offline(monkeypatch):
    for name in ("REINS_MODEL", "REINS_CHECKPOINT", "REINS_CHECKPOINT_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_runs_and_resume_work_from_another_directory(offline, tmp_path, monkeypatch, capsys, reins_home):
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir(), second.mkdir()
    monkeypatch.chdir(first)
    monkeypatch.setattr("builtins.input", lambda prompt="": (_ for _ in ()).throw(EOFError()))
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review", "--json"]) == 5
    thread = json.loads(capsys.readouterr().out)["thread_id"]

    monkeypatch.chdir(second)
    assert main(["runs", "--json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["thread_id"] == thread and run["status"] == "paused"
    assert main(["resume", thread, "--decision", '{"type": "approve"}', "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["final_decision"] == "final"
    assert list(first.iterdir()) == [] and list(second.iterdir()) == []  # nothing in either directory
    assert (reins_home / "checkpoints.db").is_file()


def test_doctor_shows_the_home(offline, capsys, reins_home):
    assert main(["doctor", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["home"] == str(reins_home)
    assert main(["doctor"]) == 0
    assert f"home              {reins_home}" in capsys.readouterr().out


def test_the_default_home_is_the_platform_data_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("REINS_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    assert reins_home() == tmp_path / "data" / "reins"
    assert reins_home({"REINS_HOME": "~/runs"}).name == "runs" and "~" not in str(reins_home({"REINS_HOME": "~/runs"}))


def test_eval_writes_into_the_home(offline, tmp_path, monkeypatch, capsys, reins_home):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--repeats", "1", "--scenario", "direct-pass", "--json"]) == 0
    files = json.loads(capsys.readouterr().out)["files"]
    assert files["report"] == str(reins_home / "eval" / "report.md") and (reins_home / "eval" / "report.md").is_file()
    assert list(tmp_path.iterdir()) == []


def test_an_earlier_versions_dot_reins_is_still_read_and_said_once(offline, tmp_path, monkeypatch, capsys):
    from reins.runtime.persistence.checkpoint import open_checkpointer

    monkeypatch.delenv("REINS_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(home_module, "_told", set())
    monkeypatch.chdir(tmp_path)
    assert main(["deliver", "--scenario", "request-limit-banner", "--json"]) == 0
    delivered = json.loads(capsys.readouterr().out)["thread_id"]
    assert (tmp_path / "data" / "reins" / "checkpoints.db").is_file() and not (tmp_path / ".reins").exists()

    # An old per-directory store with a run in it: read instead, with one note on stderr.
    with open_checkpointer("sqlite", path=tmp_path / ".reins" / "checkpoints.db") as saver:
        saver.put({"configurable": {"thread_id": "deliver-old", "checkpoint_ns": ""}},
                  {"v": 1, "id": "1", "ts": "2025-01-01T00:00:00+00:00", "channel_values": {}, "channel_versions": {},
                   "versions_seen": {}}, {}, {})
    listed, notes = [], ""
    for _ in range(2):
        assert main(["runs", "--json"]) == 0
        captured = capsys.readouterr()
        listed.append([run["thread_id"] for run in json.loads(captured.out)["runs"]])
        notes += captured.err
    assert listed == [["deliver-old"], ["deliver-old"]] and delivered not in listed[0]
    assert notes.count("reading runs from ./.reins") == 1 and notes.count("\n") == 1  # said once
    assert main(["doctor"]) == 0
    assert "home              .reins" in capsys.readouterr().out
