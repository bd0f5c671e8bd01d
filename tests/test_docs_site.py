"""The documentation site: it builds with warnings as errors, every page is reachable, every code
block of it runs in the suite or says why not, the README stays short, and the generated parts (API
reference, result tables) are what the stored results give."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reins.cli import docs_pages

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Pages whose runnable blocks tests run in order (tests/test_doc_examples_run.py): Python only, or all.
PYTHON_RUN = {"README.md", "getting-started.md", "customising.md", "tools-and-approvals.md"}
BASH_RUN = {"customising.md", "tools-and-approvals.md"}
NOT_RUN = re.compile(r"<!-- not-run: \S.{10,} -->")


def _fences(text: str) -> list[tuple[str, list[str]]]:
    """Each opening fence's language and the lines before it."""
    lines = text.splitlines()
    found, inside = [], False
    for number, line in enumerate(lines):
        if line.startswith("```"):
            if not inside:
                found.append((line[3:].strip(), lines[max(0, number - 2):number]))
            inside = not inside
    return found


def test_the_readme_is_short_and_points_to_the_docs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    assert "make demo" in text and "make test" in text
    for target in re.findall(r"\]\((docs/[^)#]+)\)", text):
        assert (ROOT / target).is_file(), f"README links to a missing page {target}"


@pytest.mark.parametrize("path", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_runnable_block_runs_in_the_suite_or_says_why_not(path):
    for language, before in _fences(path.read_text(encoding="utf-8")):
        runs = (language == "python" and path.name in PYTHON_RUN) or (language == "bash" and path.name in BASH_RUN)
        if language in ("python", "bash") and not runs:
            assert any(NOT_RUN.search(line) for line in before), \
                f"{path.name}: a {language} block that no test runs needs <!-- not-run: why --> before it"


def test_the_not_run_marker_check_can_fail():
    assert _fences("text\n```python\nx = 1\n```\n") == [("python", ["text"])]
    assert not any(NOT_RUN.search(line) for line in ["text"])


def test_the_settings_example_sets_only_documented_variables():
    models = (DOCS / "models.md").read_text(encoding="utf-8")
    block = models[models.index("```bash\n# a different model for one role"):]
    block = block[: block.index("\n```", 1)]
    documented = {name.split("<")[0] for name in
                  re.findall(r"^\| `([A-Z_<>]+)`", (DOCS / "configuration.md").read_text(encoding="utf-8"), re.M)}
    for name in re.findall(r"\b([A-Z][A-Z_]+)=", block):
        assert any(name.startswith(prefix) for prefix in documented), f"{name} is not in docs/configuration.md"


def test_every_page_is_in_the_navigation():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w./-]+\.md)\s*$", config, re.M)) | set(re.findall(r"^\s+/([\w.-]+\.md)$", config, re.M))
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert pages - listed == set(), "add these pages to mkdocs.yml's nav"


def test_the_generated_parts_match_the_stored_results(capsys):
    assert docs_pages.main(["--check"]) == 0, capsys.readouterr().out + " — run `python -m reins.cli.docs_pages`"


def test_a_changed_stored_result_makes_the_check_fail(tmp_path, monkeypatch):
    stored = json.loads((docs_pages.RESULTS / "eval.json").read_text(encoding="utf-8"))
    rates = stored["rates"] if "rates" in stored else [stored]
    baseline = next(iter(rates[0]["summary"]))
    rates[0]["summary"][baseline]["correct"] -= 1
    (tmp_path / "eval.json").write_text(json.dumps(stored), encoding="utf-8")
    for name in ("bench.json",):
        (tmp_path / name).write_bytes((docs_pages.RESULTS / name).read_bytes())
    monkeypatch.setattr(docs_pages, "RESULTS", tmp_path)
    page = (DOCS / "evaluation.md").read_text(encoding="utf-8")
    assert docs_pages.rewritten("evaluation.md", page) != page


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (uv sync --group docs)")
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env={"NO_MKDOCS_2_WARNING": "1",
                          "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "index.html").is_file()
