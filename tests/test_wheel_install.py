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
# The first test waits for the wheel's build and install (the module fixture), the notebook test for a
# Jupyter kernel's install too: minutes on a loaded machine, more than the suite's default limit.
pytestmark = pytest.mark.timeout(1200)


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


# A user's own modules with the names of Reins' internal packages: none of them may shadow Reins.
USER_MODULES = ("schemas", "nodes", "graphs", "policies", "runtime", "cli", "evals")
USER_SCRIPT = '''
import cli, evals, graphs, nodes, policies, runtime, schemas  # the user's own modules, beside the script

from reins import OfflineModel, build_delivery_chain

assert schemas.OWNER == "user" and nodes.OWNER == "user"
result = build_delivery_chain(models=OfflineModel()).invoke({"requirement": "Show a banner when a user hits the request limit."})
print("status:", result["run_status"])
'''


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory) -> Path:
    """A notebook folder holding ``schemas.py``, ``nodes.py`` … of its own (pydantic models, plain code)."""
    folder = tmp_path_factory.mktemp("my-notebooks")
    for name in USER_MODULES:
        (folder / f"{name}.py").write_text(f'"""My own {name}."""\nOWNER = "user"\n\n\ndef {name}_helper():\n    return 1\n')
    (folder / "my_script.py").write_text(USER_SCRIPT)
    return folder


def test_a_script_beside_same_named_user_modules_uses_the_installed_reins(installed, user_folder, tmp_path):
    done = _run([installed / "python", "my_script.py"], cwd=user_folder, env=_clean_env(tmp_path / "home"))
    assert "status: pass" in done.stdout


def test_help_reins_lists_the_public_api_with_docstrings(installed, user_folder, tmp_path):
    done = _run([installed / "python", "-c", "import reins; help(reins)"], cwd=user_folder,
                env={**_clean_env(tmp_path / "home"), "PAGER": "cat", "TERM": "dumb"})
    names = _run([installed / "python", "-c", "import reins; print(' '.join(reins.__all__))"], cwd=user_folder,
                 env=_clean_env(tmp_path / "home")).stdout.split()
    assert len(names) > 20
    for name in names:
        assert name in done.stdout, f"help(reins) does not list {name}"
    assert "Example: ``build_delivery_chain(" in done.stdout and "ScriptedModel(" in done.stdout


@pytest.mark.integration
def test_notebooks_run_with_the_wheel_beside_same_named_user_modules(installed, user_folder, tmp_path):
    """The wheel's venv gets Jupyter's kernel and runner (the locked versions, from uv's cache); the
    notebooks run from the user's folder under the standard ``python3`` kernel, no registration."""
    work = installed.parent.parent
    constraints = work / "constraints-all.txt"
    _run([_uv(), "export", "--frozen", "--all-groups", "--no-hashes", "--no-emit-project", "--quiet",
          "--output-file", constraints], cwd=ROOT)
    _run([_uv(), "pip", "install", "--quiet", "--python", installed / "python", "--constraint", constraints,
          "ipykernel", "nbclient", "nbformat"])
    runner = '''
import sys
import nbformat
from nbclient import NotebookClient

book = nbformat.read(sys.argv[1], as_version=4)
mine = "import cli, evals, graphs, nodes, policies, runtime, schemas\\nassert schemas.OWNER == 'user'"
book.cells.insert(0, nbformat.v4.new_code_cell(mine))  # the user's own modules, imported first
NotebookClient(book, timeout=300, resources={"metadata": {"path": "."}}).execute()
errors = [o for c in book.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
assert not errors, errors
print("ran", sys.argv[1])
'''
    (tmp_path / "run_notebook.py").write_text(runner)
    env = {**_clean_env(tmp_path / "home"), "JUPYTER_PATH": str(tmp_path / "jupyter"),
           "JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    for name in ("01_tasklist_agent.ipynb", "05_assistant_tools.ipynb"):
        shutil.copy(ROOT / "notebooks" / name, user_folder / name)
        done = _run([installed / "python", tmp_path / "run_notebook.py", name], cwd=user_folder, env=env)
        assert f"ran {name}" in done.stdout
