"""The README's Python example runs as written (on the offline model), so it cannot drift from the API."""

import re

from runtime.diagrams import README


def test_readme_python_example_runs(monkeypatch):
    monkeypatch.delenv("REINS_MODEL", raising=False)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has a Python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102 — our own documentation
    assert namespace["result"]["run_status"] == "clarification_required"
    assert namespace["scripted"].contracts_called() == ["delivery.supervisor_pre"]
