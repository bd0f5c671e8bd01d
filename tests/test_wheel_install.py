"""The real wheel in a fresh virtual environment: ``reins`` works from an empty directory, reading its
bundled documents and configuration as package data and keeping its runs under ``REINS_HOME``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _uv() -> str:
    # `make test` has uv on PATH or installs it into .tools/ (see the Makefile).
    found = shutil.which("uv") or next((str(p) for p in [ROOT / ".tools" / "bin" / "uv"] if p.is_file()), None)
    assert found, "uv is needed to build the wheel (make setup installs it into .tools/)"
    return found


def _run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, **kwargs)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The project's wheel, installed with its locked dependencies into a new venv; its bin/ directory."""
    uv, work = _uv(), tmp_path_factory.mktemp("wheel")
    _run([uv, "build", "--wheel", "--quiet", "--out-dir", work / "dist"], cwd=ROOT)
    (wheel,) = (work / "dist").glob("agent_reins-*.whl")
    # The locked versions (already in uv's cache), so the install needs nothing new from the index.
    _run([uv, "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project", "--quiet",
          "--output-file", work / "constraints.txt"], cwd=ROOT)
    _run([uv, "venv", "--quiet", "--python", sys.executable, work / "venv"])
    _run([uv, "pip", "install", "--quiet", "--python", work / "venv" / "bin" / "python",
          "--constraint", work / "constraints.txt", wheel])
    names = zipfile.ZipFile(wheel).namelist()
    assert "reins/resources/langgraph.json" in names
    assert "reins/resources/scenarios/request-limit-banner/requirement.md" in names
    # One import name: the wheel installs ``reins`` alone (and its metadata), never a bare ``schemas``.
    assert {name.split("/")[0] for name in names} == {"reins", f"{wheel.name.split('-py3')[0]}.dist-info"}
    return work / "venv" / "bin"


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_", "VIRTUAL_ENV", "PYTHON"))}
    return {**env, "REINS_HOME": str(home), "NO_COLOR": "1"}


def test_the_installed_reins_delivers_from_an_empty_directory(installed, tmp_path):
    empty, home = tmp_path / "anywhere", tmp_path / "home"
    empty.mkdir()
    done = subprocess.run(
        [str(installed / "reins"), "deliver", "--scenario", "request-limit-banner", "--json"],
        cwd=empty, env=_clean_env(home), capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    payload = json.loads(done.stdout)
    assert payload["run_status"] == "pass" and payload["thread_id"].startswith("deliver-")
    assert payload["report"].startswith("# Delivery report") and payload["failure"] is None
    assert "Traceback" not in done.stderr
    assert list(empty.iterdir()) == []  # nothing written where the command was run
    assert (home / "checkpoints.db").is_file()

    # The same home from another directory: the run is listed, the bundled plans and graphs are read.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runs = _run([installed / "reins", "runs", "--json"], cwd=elsewhere, env=_clean_env(home))
    assert [run["thread_id"] for run in json.loads(runs.stdout)["runs"]] == [payload["thread_id"]]
    graph = _run([installed / "reins", "graph", "delivery_chain", "--json"], cwd=elsewhere, env=_clean_env(home))
    assert "supervisor_pre" in json.loads(graph.stdout)["mermaid"]
