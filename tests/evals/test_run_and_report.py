"""A small end-to-end evaluation on the offline model, its report and plot, and ``reins eval``."""

from __future__ import annotations

import json

import pytest

from evals.report import markdown_report, write_report
from evals.run import run_evaluation
from evals.scenarios import scenario_by_id
from evals.scorer import hard_rule_violations
from runtime.cli import main
from runtime.models import ModelSet
from runtime.offline import OfflineModel

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
        assert hard_rule_violations(fixed[scenario]) == ["pass_without_three_reviews"]
    assert "one-reviewer-failure" not in {r.scenario for r in results.records if r.baseline == "single_agent"}


def test_report_and_plot_are_written(results, tmp_path):
    paths = write_report(results, tmp_path / "out")
    report = paths["report"].read_text()
    assert report == markdown_report(results) + "\n"
    assert "| controlled chain | 7 | 7/7 (100%) |" in report
    assert "| one-reviewer-failure | one-reviewer-failure | needs_review | n/a | pass (0/1) ⚠ | needs_review (1/1) |" in report
    assert "| controlled chain | review group: all_reviews_failed | 1 |" in report
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_perturbed_runs_repeat_exactly_for_a_seed():
    scenarios = [scenario_by_id("direct-pass"), scenario_by_id("risk-blocker")]
    first = run_evaluation(2, 0.3, 11, MODELS, scenarios=scenarios, baselines=["fixed_multi_agent", "controlled_chain"])
    again = run_evaluation(2, 0.3, 11, MODELS, scenarios=scenarios, baselines=["fixed_multi_agent", "controlled_chain"])
    strip = lambda res: [(r.baseline, r.scenario, r.repeat, r.status, r.calls, dict(r.injected)) for r in res.records]
    assert strip(first) == strip(again)
    assert sum(sum(r.injected.values()) for r in first.records) > 0
    assert first.summary["controlled_chain"]["violations"] == 0


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
    assert printed.out.startswith("| baseline | runs | status correct |")
    assert "| controlled chain | 2 | 2/2 (100%) |" in printed.out
    assert "controlled_chain" in printed.err and "one-reviewer-failure" in printed.err
    assert (out / "report.md").is_file() and (out / "plot.png").is_file()
    code = main(["eval", "--repeats", "1", "--scenario", "direct-pass", "--out", str(out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["summary"]["controlled_chain"]["correct"] == 1
    assert data["scenarios"]["direct-pass"]["single_agent"]["status"] == "pass"


@pytest.mark.parametrize(
    "argv",
    [["eval", "--perturb", "1.5"], ["eval", "--perturb", "nan"], ["eval", "--repeats", "0"],
     ["eval", "--scenario", "no-such-case"]],
)
def test_reins_eval_refuses_bad_input(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("reins: error:") and "Traceback" not in err
