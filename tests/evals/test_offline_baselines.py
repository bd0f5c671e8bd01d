"""The offline responders of the two simple baselines, and the baselines on the offline model."""

from __future__ import annotations

import pytest

from reins.evals.baselines import UNREADABLE, run_baseline
from reins.evals.markers import read_marker
from reins.evals.scenarios import SCENARIOS, scenario_by_id
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel, registered_contracts
from reins.runtime.standins.scripted import ScriptedModel

MODELS = ModelSet.uniform(OfflineModel())
PLAIN = [s for s in SCENARIOS if not s.failing_reviewers]
# The simple baselines have no caution rule: a high risk that does not block ends in pass there,
# where the controlled chain's status matrix (the scenarios' expectation) asks for a person.
CAUTION_ONLY = {"register-login"}


def baseline_status_expected(scenario, status):
    return status == "pass" if scenario.id in CAUTION_ONLY else status in scenario.acceptable


def test_every_eval_contract_has_an_offline_responder():
    from reins.runtime.contracts import CONTRACT_ROLES

    evals = sorted(c for c in CONTRACT_ROLES if c.startswith("eval."))
    assert len(evals) == 6 and set(evals) <= set(registered_contracts())


@pytest.mark.parametrize("scenario", PLAIN, ids=lambda s: s.id)
def test_single_agent_offline_status(scenario):
    outcome = run_baseline("single_agent", scenario.payload(), MODELS)
    assert baseline_status_expected(scenario, outcome.status)
    assert outcome.calls == 1 and outcome.tokens > 0 and not outcome.revised
    assert outcome.completed_reviews == (0 if outcome.status == "clarification_required" or
                                         scenario.id == "bypass-review" else 3)


@pytest.mark.parametrize("scenario", PLAIN, ids=lambda s: s.id)
def test_fixed_pipeline_offline_status(scenario):
    outcome = run_baseline("fixed_multi_agent", scenario.payload(), MODELS)
    assert baseline_status_expected(scenario, outcome.status)
    assert (outcome.calls, outcome.completed_reviews, outcome.revised) == (5, 3, False)
    assert outcome.blocker_seen is (scenario.expected == "blocked")


def test_fixed_pipeline_calls_in_order_and_reviews_see_plan_and_tasks():
    seen = {}

    def reviewer(role, verdict):
        def answer(messages):
            seen[role] = messages[-1].content
            return f"# {role}\n\nVERDICT: {verdict}"
        return answer

    model = ScriptedModel({
        "eval.fixed_plan": ["# Plan\n\n## Acceptance criteria\n- AC-R1: banner shows\n\nREADINESS: ready"],
        "eval.fixed_tasks": ["# Tasks\n\n- [ ] T-R1: banner shows"],
        "eval.fixed_general_review": reviewer("general", "pass"),
        "eval.fixed_risk_review": reviewer("risk", "Showstopper"),  # unreadable: skipped, no objection
        "eval.fixed_boundary_review": [ConnectionError("down")],  # failed: skipped
    })
    outcome = run_baseline("fixed_multi_agent", {"requirement": "- Show a banner."}, ModelSet.uniform(model))
    assert model.contracts_called()[:2] == ["eval.fixed_plan", "eval.fixed_tasks"]
    assert sorted(model.contracts_called()[2:]) == ["eval.fixed_boundary_review", "eval.fixed_general_review",
                                                    "eval.fixed_risk_review"]
    assert all("<plan_markdown>" in text and "T-R1" in text for text in seen.values())
    assert (outcome.status, outcome.completed_reviews) == ("pass", 1)


@pytest.mark.parametrize(
    ("reply", "status", "reviews", "failure"),
    [("GENERAL: pass\nRISK: low\nBOUNDARY: passed\nSTATUS: pass", "pass", 3, None),
     ("GENERAL: pass\nRISK: low\nSTATUS: approved", UNREADABLE, 2, None),
     (TimeoutError("slow"), "failed", 0, "single call: timeout"),
     (ConnectionError("reset"), "failed", 0, "single call: execution_failed")],
)
def test_single_agent_reads_only_its_status_line(reply, status, reviews, failure):
    model = ScriptedModel({"eval.single_agent": [reply]})
    outcome = run_baseline("single_agent", {"requirement": "- Show a banner."}, ModelSet.uniform(model))
    assert (outcome.status, outcome.completed_reviews, outcome.failure) == (status, reviews, failure)


def test_fixed_pipeline_without_tasks_fails_and_says_where():
    model = ScriptedModel({"eval.fixed_plan": ["READINESS: ready"], "eval.fixed_tasks": [TimeoutError("slow")]})
    outcome = run_baseline("fixed_multi_agent", {"requirement": "- Show a banner."}, ModelSet.uniform(model))
    assert (outcome.status, outcome.failure, outcome.calls) == ("failed", "tasks: timeout", 2)
    assert model.contracts_called() == ["eval.fixed_plan", "eval.fixed_tasks"]


def test_offline_single_agent_text_carries_plan_tasks_reviews_and_status():
    outcome_text = OfflineModel().invoke(
        "<requirement>\n- Persist the raw delivery artifacts of every run.\n- Add a history page.\n</requirement>",
        config={"metadata": {"reins_contract": "eval.single_agent", "reins_role": "planner"}},
    ).content
    assert "## Plan" in outcome_text and "## Tasks" in outcome_text
    assert read_marker(outcome_text, "BOUNDARY") == "blocked" and read_marker(outcome_text, "STATUS") == "blocked"


def test_scenario_set_holds_the_reference_cases():
    from reins.evals.scenarios import REFERENCE_CASES

    assert len(SCENARIOS) >= 12 and len({s.id for s in SCENARIOS}) == len(SCENARIOS)
    assert [scenario_by_id(c).case for c in REFERENCE_CASES] == list(REFERENCE_CASES)
    assert scenario_by_id("two-reviewer-failures").fault_contracts("controlled_chain") == {
        "delivery.risk_review", "delivery.boundary_review"}
    assert not scenario_by_id("one-reviewer-failure").applies_to("single_agent")
