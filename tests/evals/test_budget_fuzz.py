"""The budget fuzz: adversarial runs never pass the printed bound, and a bound that forgets what a
run may spend (retries, fallbacks) is caught."""

from __future__ import annotations

from dataclasses import replace

from reins.cli import main
import pytest

from reins.evals.budget_fuzz import fuzz_budget, stage_composed_run
from reins.runtime.execution.budget import GRAPHS, worst_case


def test_adversarial_runs_never_exceed_the_bound():
    results = fuzz_budget(150, full_runs=0)  # full graph runs: the doctor test below
    assert set(results) == set(GRAPHS)
    for graph, entry in results.items():
        assert entry.runs == {"stage_composed": 45, "worst_adversary": 5, "full_graph": 0}, graph
        assert entry.violations == [], graph
        ratios = entry.tightness()
        assert all(0 <= ratio <= 1 for ratio in ratios.values()), (graph, ratios)
        # at its worst the adversary takes every path the bound counts: the call bound is reached
        # exactly, the time bound all but its backoff jitter (and the assistant's tool time)
        assert ratios["calls"] == 1.0 and ratios["seconds"] > 0.9, (graph, ratios)


@pytest.mark.parametrize("graph", GRAPHS)
def test_the_direct_answers_give_the_runs_langchain_gives(graph):
    """The fuzz answers requests without LangChain's invoke for speed: the same seeds through it
    make the same calls and spend the same tokens (time differs by the backoff's random jitter)."""
    for seed in range(4):
        through, direct = stage_composed_run(graph, seed, True), stage_composed_run(graph, seed, False)
        assert (through["calls"], through["output_tokens"]) == (direct["calls"], direct["output_tokens"])
        assert through["seconds"] == pytest.approx(direct["seconds"], rel=0.05, abs=1.0)


def _forgetful(graph, models):
    """A bound computed as if no request were retried and no role had a fallback."""
    policies = {role: replace(models.policy(role), retries=0) for role in models.models}
    return worst_case(graph, replace(models, fallbacks={}).with_policies(**policies))


def test_a_bound_too_small_is_caught():
    results = fuzz_budget(15, full_runs=0, bound_of=_forgetful)
    for graph, entry in results.items():
        assert any(": calls " in line for line in entry.violations), graph


def test_doctor_prints_the_fuzz_per_graph(capsys):
    assert main(["doctor", "--budget", "--fuzz", "6", "--json"]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert set(report) == set(GRAPHS)
    for entry in report.values():
        assert entry["violations"] == [] and sum(entry["runs"].values()) == 2
        assert entry["tightness"]["calls"] == round(entry["observed_max"]["calls"] / entry["bound"]["calls"], 3)
    assert main(["doctor", "--budget", "--fuzz", "2"]) == 2
    assert "at least 3 runs" in capsys.readouterr().err
