"""``.env``: read by ``reins`` (the real environment wins), documented by ``.env.example``, git-ignored."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dotenv import dotenv_values

from reins.cli import env_file, main

ROOT = Path(__file__).resolve().parents[2]


def test_reins_reads_dot_env_and_the_environment_wins(tmp_path, monkeypatch, capsys):
    (tmp_path / ".env").write_text("REINS_CHECKPOINT=memory\nREINS_CONTRACT_MODE=two_step\n# a comment\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(env_file, "ENV_FILE", Path(".env"))
    monkeypatch.setenv("REINS_CONTRACT_MODE", "direct")  # set for real: the file does not replace it
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    monkeypatch.delenv("REINS_CHECKPOINT")  # unset, and restored as unset after the test
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["checkpointer"] == "memory" and report["contract_mode"] == "direct"
    assert report["env_file"].startswith(".env (read")


def test_no_dot_env_is_fine(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(env_file, "ENV_FILE", Path(".env"))
    assert main(["doctor", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["env_file"] == "none"


def _documented() -> set[str]:
    """The variables of the docs' Configuration table (``REINS_MODEL_<ROLE>`` as its prefix)."""
    table = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    return {name.split("<")[0] for name in re.findall(r"^\| `([A-Z_<>]+)`", table, re.M)}


def test_dot_env_example_documents_every_variable_and_dot_env_is_ignored():
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    documented = _documented()
    assert {"REINS_MODEL", "REINS_HOME", "OPENAI_API_KEY", "REINS_MODEL_", "REINS_MAX_TOKENS_"} <= documented
    for name in documented:  # each appears as a setting or, for the per-role ones, an example
        assert re.search(rf"^#? ?{name}[A-Z]*=", example, re.M), name
    assert set(dotenv_values(ROOT / ".env.example")) <= documented  # nothing undocumented
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()
