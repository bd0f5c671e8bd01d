"""The docs' Mermaid diagrams (docs/graphs.md) are those of the compiled graphs; `reins graph` prints the same."""

import pytest

from reins.cli import main
from reins.cli.diagrams import GRAPHS_PAGE, graph_entry_points, mermaid, page_with_diagrams


def test_docs_diagrams_are_current():
    current = GRAPHS_PAGE.read_text()
    assert page_with_diagrams(current) == current, "stale diagrams: run `.venv/bin/python -m reins.cli.diagrams`"


@pytest.mark.parametrize("name", ["tasklist_agent", "delivery_chain", "assistant"])
def test_reins_graph_prints_the_compiled_graph(name, capsys):
    assert main(["graph", name]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == mermaid(name)
    assert "__start__" in printed and "__end__" in printed


def test_every_exported_graph_has_a_docs_block():
    assert sorted(graph_entry_points()) == ["assistant", "delivery_chain", "tasklist_agent"]
    for name in graph_entry_points():
        assert f"<!-- diagram:{name} -->" in GRAPHS_PAGE.read_text()


def test_unknown_graph_is_a_clear_error(capsys):
    assert main(["graph", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown graph 'nope'" in err and "Traceback" not in err


def test_reins_graph_json(capsys):
    import json

    assert main(["graph", "assistant", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload == {"graph": "assistant", "mermaid": mermaid("assistant")}


def test_reins_bench_runs_a_named_benchmark_and_refuses_unknown_ones(capsys):
    assert main(["bench", "redaction_scaling"]) == 0
    assert "redaction_scaling: time(200 KB) / time(20 KB) =" in capsys.readouterr().out
    assert main(["bench", "nope"]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("as_json", [False, True])
def test_a_failed_benchmark_names_its_exception_and_message_redacted(as_json, capsys, monkeypatch):
    import importlib
    import json

    module = importlib.import_module("reins.benchmarks.run")

    def failing():
        raise RuntimeError("the benchmark scenario should pass, not needs_review (key sk-abcdefghijklmnop)")

    monkeypatch.setattr(module, "redaction_scaling", failing)
    assert main(["bench", "redaction_scaling", *(["--json"] if as_json else [])]) == 4
    captured = capsys.readouterr()
    shown = json.loads(captured.out)["error"]["message"] if as_json else captured.err
    assert "benchmark redaction_scaling failed: RuntimeError: the benchmark scenario should pass, not needs_review" in shown
    assert "sk-abcdefghijklmnop" not in captured.out + captured.err
