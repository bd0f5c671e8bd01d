"""The README's Python examples run as written (on the offline model), so they cannot drift from the API."""

import json
import re

from cli.diagrams import README


def test_readme_python_example_runs(monkeypatch):
    monkeypatch.delenv("REINS_MODEL", raising=False)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has a Python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102 — our own documentation
    assert namespace["result"]["run_status"] == "clarification_required"
    assert namespace["scripted"].contracts_called() == ["delivery.supervisor_pre"]


ROOT = README.parent
CUSTOMISING = ("## Customising\n", "## How a model output becomes a decision\n")


def test_readme_customising_snippets_run_in_order(tmp_path, monkeypatch):
    """Every bash and Python snippet of README's "Customising" section, run in a fresh directory."""
    import os
    import subprocess

    text = README.read_text()
    section = text[text.index(CUSTOMISING[0]) : text.index(CUSTOMISING[1])]
    blocks = re.findall(r"```(bash|python)\n(.*?)```", section, re.S)
    assert [kind for kind, _ in blocks].count("python") >= 5 and [kind for kind, _ in blocks].count("bash") >= 2

    for name in ("resources", ".venv"):
        (tmp_path / name).symlink_to(ROOT / name)
    for name in list(os.environ):
        if name.startswith(("REINS_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    namespace: dict = {}
    from runtime.contracts import CONTRACT_ROLES

    known = set(CONTRACT_ROLES)
    try:
        for kind, code in blocks:
            if kind == "bash":
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env,
                                      capture_output=True, text=True, timeout=300)
                assert done.returncode == 0, done.stderr[-2000:]
            else:
                exec(compile(code, "README.md#customising", "exec"), namespace)  # noqa: S102 — our own documentation
    finally:  # "Add a reviewer" registers its contract: leave the global table as it was
        for name in set(CONTRACT_ROLES) - known:
            del CONTRACT_ROLES[name]

    assert json.loads((tmp_path / "tasklist.json").read_text())["final_decision"] == "final"
    assert namespace["mine"]["run_status"] == "blocked" and namespace["result"]["run_status"] == "failed"
    # "Add a reviewer": the chain ran with four reviewers and the fourth's blocker blocked
    assert list(namespace["digest"]["review_bundle"]["coverage"]) == ["general", "risk", "boundary", "privacy"]
    assert namespace["digest"]["run_status"] == "blocked" and namespace["passed"]["run_status"] == "pass"
