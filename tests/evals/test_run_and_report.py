"""A small end-to-end evaluation on the offline model, its report and plot, and ``reins eval``."""

from __future__ import annotations

import dataclasses
import json

import pytest

from reins.evals.perturbed import PerturbedModel
from reins.evals.report import markdown_report, write_report
from reins.evals.run import run_evaluation
from reins.evals.scenarios import scenario_by_id
from reins.evals.scorer import hard_rule_violations
from reins.cli import main
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel

MODELS = ModelSet.uniform(OfflineModel())
IDS = ("direct-pass", "revision-required", "boundary-blocked", "one-reviewer-failure", "two-reviewer-failures",
       "all-reviewers-failure", "clarification-required")


@pytest.fixture(scope="module")
def results():
    return run_evaluation(1, 0.0, 0, MODELS, scenarios=[scenario_by_id(i) for i in IDS])


def test_controlled_chain_is_fully_correct_without_violations_at_rate_zero(results):
    chain = results.summary["controlled_chain"]
    assert chain["runs"] == len(IDS)
    assert chain["correct"] == chain["runs"] and chain["violations"] == 0
    runs = {r.scenario: r for r in results.records if r.baseline == "controlled_chain"}
    assert runs["revision-required"].status == "needs_review" and runs["revision-required"].revised
    assert runs["one-reviewer-failure"].completed_reviews == 2
    assert runs["all-reviewers-failure"].status == "failed"
    assert runs["all-reviewers-failure"].failure == "review group: all_reviews_failed"
    assert results.summary["controlled_chain"]["failures"] == {"review group: all_reviews_failed": 1}
    assert all(r.calls > 0 and r.tokens > 0 for r in runs.values())


def test_the_fixed_pipeline_passes_where_reviews_failed(results):
    fixed = {r.scenario: r for r in results.records if r.baseline == "fixed_multi_agent"}
    for scenario in ("one-reviewer-failure", "two-reviewer-failures", "all-reviewers-failure"):
        assert fixed[scenario].status == "pass"
        assert hard_rule_violations(fixed[scenario]) == ["pass_without_all_reviews"]
    assert "one-reviewer-failure" not in {r.scenario for r in results.records if r.baseline == "single_agent"}


def test_report_and_plot_are_written(results, tmp_path):
    paths = write_report(results, tmp_path / "out")
    report = paths["report"].read_text()
    assert report == markdown_report(results) + "\n"
    assert "| controlled chain | 7 | 7/7 (100%) |" in report
    assert "| one-reviewer-failure | one-reviewer-failure | needs_review | n/a | pass (0/1) ⚠ | needs_review (1/1) |" in report
    assert "| controlled chain | review group: all_reviews_failed | 1 |" in report
    # the fixed pipeline completed where reviews failed, with a status no failure explains
    assert "## Why runs were wrong" in report and "| fixed multi-agent | wrong_status | 3 |" in report
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_perturbed_runs_repeat_exactly_for_a_seed():
    scenarios = [scenario_by_id("direct-pass"), scenario_by_id("risk-blocker")]
    first = run_evaluation(2, 0.3, 11, MODELS, scenarios=scenarios, baselines=["fixed_multi_agent", "controlled_chain"])
    again = run_evaluation(2, 0.3, 11, MODELS, scenarios=scenarios, baselines=["fixed_multi_agent", "controlled_chain"])
    strip = lambda res: [(r.baseline, r.scenario, r.repeat, r.status, r.calls, dict(r.injected)) for r in res.records]
    assert strip(first) == strip(again)
    assert sum(sum(r.injected.values()) for r in first.records) > 0
    assert first.summary["controlled_chain"]["violations"] == 0


def test_scenarios_sharing_a_prompt_draw_independently_while_baselines_share_their_draws():
    # Two scenarios on one requirement send the same prompts: each run must still draw its own faults,
    # or one draw is counted once per scenario. The baselines of one run meet the same draws.
    twin = dataclasses.replace(scenario_by_id("direct-pass"), id="direct-pass-twin")
    results = run_evaluation(4, 0.5, 5, MODELS, scenarios=[scenario_by_id("direct-pass"), twin],
                             baselines=["controlled_chain", "controlled_chain_fallback"])
    runs = {(r.baseline, r.scenario, r.repeat): r for r in results.records}
    first_call = "delivery.supervisor_pre"
    twins_differ = [runs["controlled_chain", "direct-pass", k].injected_on
                    != runs["controlled_chain", "direct-pass-twin", k].injected_on for k in range(4)]
    assert any(twins_differ)
    for scenario in ("direct-pass", "direct-pass-twin"):
        for k in range(4):
            plain = runs["controlled_chain", scenario, k].injected_on.get(first_call, ())
            with_fallback = runs["controlled_chain_fallback", scenario, k].injected_on.get(first_call, ())
            assert plain[:1] == with_fallback[:1]  # the primary's first draw is the same in both rows
    assert any(runs["controlled_chain", s, k].injected_on.get(first_call)
               for s in ("direct-pass", "direct-pass-twin") for k in range(4))


def test_the_escalation_row_meets_the_primary_draws_and_counts_who_served():
    # The escalation row is the fallback row plus escalation models with their own draws: the primary's
    # draws are the same in both, the escalation models serve what the primary kept failing.
    scenarios = [scenario_by_id("direct-pass"), scenario_by_id("risk-blocker")]
    results = run_evaluation(3, 0.5, 3, MODELS, scenarios=scenarios,
                             baselines=["controlled_chain_fallback", "controlled_chain_escalation"])
    runs = {(r.baseline, r.scenario, r.repeat): r for r in results.records}
    for scenario in ("direct-pass", "risk-blocker"):
        for k in range(3):
            fallback = runs["controlled_chain_fallback", scenario, k].injected_on.get("delivery.supervisor_pre", ())
            escalation = runs["controlled_chain_escalation", scenario, k].injected_on.get("delivery.supervisor_pre", ())
            assert fallback[:1] == escalation[:1]
    summary = results.summary["controlled_chain_escalation"]
    assert summary["violations"] == 0
    assert 0 < summary["primary_served"] < 1  # at rate 0.5 others served some calls
    assert all(r.primary_calls <= r.served_calls for r in results.records)
    assert summary["correct"] >= results.summary["controlled_chain_fallback"]["correct"]


def test_run_evaluation_refuses_bad_arguments():
    with pytest.raises(ValueError):
        run_evaluation(0, 0.0, 0, MODELS)
    with pytest.raises(ValueError):
        run_evaluation(1, 1.5, 0, MODELS)
    with pytest.raises(ValueError):
        run_evaluation(1, 0.0, 0, MODELS, baselines=["oracle"])


def test_reins_eval_writes_files_and_prints_the_table(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("REINS_MODEL", raising=False)
    out = tmp_path / "eval"
    code = main(["eval", "--repeats", "1", "--scenario", "direct-pass", "--scenario", "one-reviewer-failure",
                 "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0
    assert printed.out.startswith("| baseline | rate | runs | status correct | ceiling (fault model) | hard-rule violations | "
                                  "failed runs | resampled manager turns | retries | calls/run median [range] | "
                                  "calls/pass run median | primary served |")
    assert "| controlled chain | 0 | 2 | 2/2 (100%) | 100% | 0 | 0 | 0 | 0 |" in printed.out
    assert "| controlled chain + fallback | 0 | 2 | 2/2 (100%) | 100% | 0 | 0 | 0 | 0 |" in printed.out
    escalation = next(line for line in printed.out.splitlines() if line.startswith("| controlled chain + escalation |"))
    assert escalation.startswith("| controlled chain + escalation | 0 | 2 | 2/2 (100%) | 100% | 0 | 0 | 0 | 0 |")
    assert escalation.endswith("| 100.0% |")  # nothing failed: the roles' own models served every call
    assert "| single agent | 0 | 1 | 1/1 (100%) | – |" in printed.out
    assert "controlled_chain" in printed.err and "one-reviewer-failure" in printed.err
    assert (out / "report.md").is_file() and (out / "plot.png").is_file()
    # summary.json is the stored result the docs' evaluation table is generated from: the same table
    from reins.cli import docs_pages

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "eval.json").write_bytes((out / "summary.json").read_bytes())
    monkeypatch.setattr(docs_pages, "RESULTS", tmp_path / "results")
    assert docs_pages.eval_table().split("\n\n", 1)[1].strip() == printed.out.strip()
    code = main(["eval", "--repeats", "1", "--scenario", "direct-pass", "--out", str(out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["summary"]["controlled_chain"]["correct"] == 1
    assert data["scenarios"]["direct-pass"]["single_agent"]["status"] == "pass"


@pytest.mark.parametrize(
    "argv",
    [["eval", "--perturb", "1.5"], ["eval", "--perturb", "nan"], ["eval", "--perturb", "0,x"],
     ["eval", "--perturb", "0.1,0.1"], ["eval", "--perturb", ""], ["eval", "--repeats", "0"],
     ["eval", "--scenario", "no-such-case"], ["eval", "--perturb-kinds", "gremlins"],
     ["eval", "--perturb-kinds", ","]],
)
def test_reins_eval_refuses_bad_input(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("reins: error:") and "Traceback" not in err


def test_reins_eval_reports_each_rate_and_counts_resampled_turns_and_retries(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("REINS_MODEL", raising=False)
    out = tmp_path / "eval"
    code = main(["eval", "--repeats", "2", "--scenario", "direct-pass", "--scenario", "dark-mode",
                 "--perturb", "0,0.3", "--seed", "2", "--out", str(out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["settings"]["rate"] for r in data["rates"]] == [0.0, 0.3]
    calm, noisy = (r["summary"]["controlled_chain"] for r in data["rates"])
    assert (calm["reasks"], calm["retries"], calm["correct"]) == (0, 0, 4)
    assert calm["calls_per_pass_run"]["median"] == 10
    report = (out / "report.md").read_text()
    assert report.startswith("# Reins evaluation: three baselines")
    assert "## Rate 0\n" in report and "## Rate 0.3\n" in report and "### Per scenario" in report
    assert "| controlled chain | 0.3 | 4 |" in report


def test_resampled_turns_and_retries_reach_the_summary():
    from dataclasses import replace

    from reins.evals.perturbed import PerturbedModel

    # Every manager turn is refused once, then the re-ask is answered; every plan call times out
    # once at the provider, then the retry is answered: both recover, and both are counted.
    def noisy(kind, contract, limit):
        return PerturbedModel(OfflineModel(), 1.0, 5, kinds=(kind,), contracts={contract}, limit=limit)

    manager = noisy("rephrased_verdict", "delivery.manager", 1)
    planner = noisy("provider_timeout", "delivery.plan", 1)
    models = MODELS.with_models({"manager": manager, "planner": planner})
    models = models.with_policies(**{role: replace(policy, backoff_initial_s=0.001)
                                     for role, policy in models.policies.items()})
    results = run_evaluation(1, 0.0, 0, models, scenarios=[scenario_by_id("direct-pass")],
                             baselines=["controlled_chain"])
    (record,) = results.records
    assert record.status == "pass" and (record.reasks, record.retries) == (1, 1)
    assert record.calls == 12  # 10 calls, the re-asked manager turn and the retried plan
    summary = results.summary["controlled_chain"]
    assert (summary["reasks"], summary["retries"]) == (1, 1)


def test_kinds_narrow_the_perturbation_and_each_wrong_run_gets_its_cause():
    from dataclasses import replace

    direct = [scenario_by_id("direct-pass")]
    # Every call draws a 400: the chain stops at its first call, and nothing may retry it.
    fatal = run_evaluation(1, 1.0, 3, MODELS, scenarios=direct, baselines=["controlled_chain"], kinds=["bad_request"])
    (run,) = fatal.records
    assert run.status == "failed" and run.stops == (("delivery.supervisor_pre", "execution_failed"),)
    assert run.injected_on == {"delivery.supervisor_pre": ("bad_request",)}
    assert fatal.settings["kinds"] == ["bad_request"]
    assert fatal.summary["controlled_chain"]["wrong_causes"] == {"non_retryable_fault": 1}
    report = markdown_report(fatal)
    assert "perturbation rate 1 (only bad_request)" in report
    assert "| controlled chain | non_retryable_fault | 1 |" in report
    # Every call times out at the provider: retried once, and the retry times out too.
    fast = MODELS.with_policies(**{role: replace(policy, backoff_initial_s=0.001)
                                   for role, policy in MODELS.policies.items()})
    transient = run_evaluation(1, 1.0, 3, fast, scenarios=direct, baselines=["controlled_chain"],
                               kinds=["provider_timeout"])
    assert transient.records[0].injected_on == {"delivery.supervisor_pre": ("provider_timeout", "provider_timeout")}
    assert transient.summary["controlled_chain"]["wrong_causes"] == {"retryable_twice": 1}
    # Every review's output drifts from its schema, and so does its repair: the run completes, unreviewed.
    reviews = {f"delivery.{role}_review" for role in ("general", "risk", "boundary")}
    drifting = PerturbedModel(OfflineModel(), 1.0, 3, kinds=["schema_drift"], contracts=reviews)
    lost = run_evaluation(1, 0.0, 0, MODELS.with_models({"reviewer": drifting}), scenarios=direct,
                          baselines=["controlled_chain"])
    (run,) = lost.records
    assert run.status == "failed" and {contract for contract, _ in run.stops} == reviews
    assert lost.summary["controlled_chain"]["wrong_causes"] == {"invalid_after_repair": 1}


@pytest.mark.parametrize(
    ("out", "stops"),
    [
        ({"run_status": "pass", "review_bundle": {"coverage": dict.fromkeys(("general", "risk", "boundary"), "completed")}},
         ()),
        # the supervisor and the manager fail closed with their own codes: the cause tells what failed
        ({"failure": {"stage": "supervisor-pre-decision", "code": "supervisor_failed",
                      "cause": "invalid output after repair: literal_error"}},
         (("delivery.supervisor_pre", "contract_failure"),)),
        ({"failure": {"stage": "supervisor-pre-decision", "code": "supervisor_failed", "cause": "timeout"}},
         (("delivery.supervisor_pre", "timeout"),)),
        ({"failure": {"stage": "manager", "code": "manager_failed", "cause": "HTTP 400"}},
         (("delivery.manager", "execution_failed"),)),
        ({"failure": {"stage": "delegation", "code": "no_tool_call"}}, (("delivery.manager", "refused"),)),
        ({"failure": {"stage": "delegate-plan", "code": "contract_failure", "cause": "invalid output after repair: x"}},
         (("delivery.plan", "contract_failure"),)),
        # a rule, not a call: the reviewer roles the pre-decision named were not exactly the three
        ({"failure": {"stage": "supervisor-pre-decision", "code": "reviewer_roles_inexact"}},
         (("delivery.supervisor_pre", "reviewer_roles_inexact"),)),
        ({"review_bundle": {"coverage": {"general": "contract_failure", "risk": "completed", "boundary": "timeout"}}},
         (("delivery.general_review", "contract_failure"), ("delivery.boundary_review", "timeout"))),
    ],
)
def test_chain_stops_name_the_calls_that_decided_the_run(out, stops):
    from reins.evals.baselines import chain_stops

    assert chain_stops(out) == stops
