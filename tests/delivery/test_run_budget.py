"""The worst-case budget on real runs: never exceeded under faults, reported beside what a run used,
printed by ``reins doctor --budget`` and enforced as the user's caps before a run starts."""

from __future__ import annotations

import json

import pytest

from reins.cli import main
from reins.evals.run import run_seed, wrap_models
from reins.evals.scenarios import SCENARIOS
from reins.graphs.delivery_chain import build_graph
from reins.policies.audit.budget import tightness
from reins.policies.delivery.delegation import DelegationPolicy
from reins.runtime.execution.budget import used, worst_case
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel


def test_faulty_runs_never_exceed_the_worst_case():
    """Runs under the evaluation's fault model at a high rate, each role with a fallback: what every
    run used stays within the bound computed for that model set."""
    models = ModelSet.uniform(OfflineModel())
    observed = {"calls": 0, "output_tokens": 0, "tool_calls": 0}
    runs = 0
    for seed in range(2):
        for scenario in SCENARIOS[:6]:
            faulty, _ = wrap_models(models, rate=0.5, seed=run_seed(seed, 0, scenario.id), scenario=scenario,
                                    baseline="controlled_chain_fallback")
            worst = worst_case("delivery_chain", faulty)
            out = build_graph(models=faulty).invoke(dict(scenario.payload()))
            spent = out["metrics"]["budget"]["used"]
            assert spent["calls"] == used(out["metrics"]["per_contract"])["calls"]
            assert out["metrics"]["budget"]["worst_case"] == worst.as_dict()
            for name in observed:
                assert spent[name] <= worst.as_dict()[name], (scenario.id, name)
                observed[name] = max(observed[name], spent[name])
            runs += 1
    ratios = tightness(observed, worst)
    assert runs == 12 and 0 < ratios["calls"] <= 1


def test_the_bound_moves_with_the_re_ask_budget_and_the_fallbacks():
    plain = ModelSet.uniform(OfflineModel())
    base = worst_case("delivery_chain", plain).calls
    assert worst_case("delivery_chain", plain, policy=DelegationPolicy(max_manager_reasks=0)).calls == base - 3 * 2
    doubled = plain.with_fallbacks({role: OfflineModel() for role in plain.models})
    assert worst_case("delivery_chain", doubled).calls == 2 * base


def test_a_run_reports_what_it_used_beside_its_worst_case(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    code = main(["deliver", "--scenario", "request-limit-banner"])
    err = capsys.readouterr().err
    assert code == 0
    line = next(line for line in err.splitlines() if line.startswith("budget (used/worst case):"))
    assert "calls 10/48" in line and "tool calls 5/5" in line


def test_doctor_budget_prints_every_graph_and_checks_the_caps(capsys, monkeypatch):
    assert main(["doctor", "--budget", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["graphs"]) == {"tasklist_agent", "delivery_chain", "assistant"}
    assert report["graphs"]["delivery_chain"]["worst_case"]["calls"] == 48
    monkeypatch.setenv("REINS_MAX_CALLS", "20")
    assert main(["doctor", "--budget"]) == 2
    assert "over your cap: calls: 48 > 20" in capsys.readouterr().out


@pytest.mark.parametrize(("cap", "code", "message"), [
    ("20", 2, "the delivery_chain worst case does not fit your caps (calls: 48 > 20)"),
    ("lots", 2, "REINS_MAX_CALLS must be a finite positive number, not 'lots'"),
    ("nan", 2, "REINS_MAX_CALLS must be a finite positive number, not 'nan'"),
    ("48", 0, None),
])
def test_a_run_whose_worst_case_exceeds_a_cap_is_refused_before_it_starts(cap, code, message, capsys, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    monkeypatch.setenv("REINS_MAX_CALLS", cap)
    assert main(["deliver", "--scenario", "request-limit-banner"]) == code
    err = capsys.readouterr().err
    if message:
        assert message in err and "Manager turn" not in err  # refused before anything ran
