"""The delivery chain with a fourth reviewer added as data: ``build_graph(reviewers=...)``."""

from __future__ import annotations

import pytest
from tests.delivery.delivery_builders import pre_execute, run, script, turn
from privacy_reviewer import FOUR, PRIVACY, privacy, privacy_contract_forgotten, privacy_rule

from reins.graphs.delivery_chain import build_graph
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.scripted import ScriptedModel

pytestmark = pytest.mark.usefixtures(privacy_contract_forgotten.__name__)
FOUR_TURNS = [turn("plan-subagent"), turn("task-subagent"), turn(*FOUR.tools)]
FOUR_PRE = pre_execute(reviewer_roles=list(FOUR.roles),
                       review_focus={role: f"{role} focus" for role in FOUR.roles})
BANNER = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
DIGEST = {"requirement": "- Send a weekly digest to every user's email address with their open tasks.\n"
                         "- The digest lists the tasks due this week."}


def scripted(status: str = "clear", **overrides) -> ScriptedModel:
    contracts = {"supervisor_pre": [FOUR_PRE], "manager": FOUR_TURNS, "privacy_review": [privacy(status)]}
    return ScriptedModel(script(**{**contracts, **overrides}))


@pytest.mark.parametrize(("status", "expected"), [("clear", "pass"), ("needs_dpo", "needs_review"), ("blocked", "blocked")])
def test_the_fourth_reviewer_counts_like_the_others(status, expected):
    model = scripted(status)
    out = run(model, reviewers=FOUR)
    assert out["run_status"] == expected
    assert out["review_bundle"]["coverage"] == dict.fromkeys(FOUR.roles, "completed")
    assert model.count("delivery.privacy_review") == 1
    # the review group is offered and called as one turn of four, in parallel
    review_turn = [c for c in model.calls if c.contract == "delivery.manager"][-1]
    assert review_turn.tool_names == FOUR.tools and review_turn.parallel_tool_calls is True
    privacy_prompt = next(c for c in model.calls if c.contract == "delivery.privacy_review").messages
    # the role's own instruction comes last, after the inputs the run's calls share (focus included)
    role = privacy_prompt[-1].content
    assert role.index("privacy focus") < role.index(PRIVACY.instruction)
    assert "| Privacy | completed |" in out["report"]
    reviews = {a["metadata"]["review_type"]: a for a in out["artifacts"]["reviews"]}
    assert reviews["privacy"]["title"] == "Privacy review"
    assert reviews["privacy"]["metadata"]["blocked"] is (status == "blocked")


def test_the_prompts_name_the_configured_reviewers():
    model = scripted()
    run(model, reviewers=FOUR)
    supervisor = next(c for c in model.calls if c.contract == "delivery.supervisor_pre").messages[-1].content
    manager = next(c for c in model.calls if c.contract == "delivery.manager").messages[-1].content
    assert "reviewer_roles (general, risk, boundary, privacy)" in supervisor
    assert "review-subagent, risk-subagent, boundary-subagent and privacy-subagent" in manager


def test_declaring_the_default_three_is_not_the_exact_set_of_four():
    model = scripted(supervisor_pre=[{**FOUR_PRE, "reviewer_roles": ["general", "risk", "boundary"]}])
    out = run(model, reviewers=FOUR)
    assert out["run_status"] == "failed" and out["policy_violation"]["code"] == "reviewer_roles_inexact"
    assert model.contracts_called() == ["delivery.supervisor_pre"]


def test_leaving_the_fourth_out_of_the_review_turn_is_refused():
    three = [turn("plan-subagent"), turn("task-subagent"), *[turn(*FOUR.tools[:3])] * 2]
    model = scripted(manager=three)
    out = run(model, reviewers=FOUR)
    assert out["run_status"] == "failed" and out["policy_violation"]["code"] == "review_group_incomplete"
    assert model.count("delivery.general_review") == 0


def test_offline_with_a_rule_for_the_fourth_its_blocker_blocks():
    graph = build_graph(models=OfflineModel(responders={PRIVACY.contract: privacy_rule}), reviewers=FOUR)
    assert graph.invoke(BANNER)["run_status"] == "pass"
    out = graph.invoke(DIGEST)
    assert out["run_status"] == "blocked"
    assert out["review_bundle"]["blockers_and_high_risks"][0] == {
        "kind": "blocker", "source": "privacy", "detail": "privacy review blocked the delivery"}


def test_offline_without_a_rule_the_fourth_review_is_missing_never_passed():
    """The stand-in has no checklist for a reviewer it does not know: the review fails its contract
    (nothing is made up) and the run needs a person."""
    out = build_graph(models=OfflineModel(), reviewers=FOUR).invoke(BANNER)
    assert out["run_status"] == "needs_review"
    assert out["review_bundle"]["coverage"]["privacy"] == "contract_failure"
    assert out["review_bundle"]["status_reasons"] == ["review(s) not completed: privacy"]


def test_a_registry_without_the_fourth_tool_is_refused_when_built():
    from reins.runtime.tools.toolbox import default_registry

    with pytest.raises(ValueError, match="reviewer sub-agent tools"):
        build_graph(models=OfflineModel(), registry=default_registry(), reviewers=FOUR)


def test_a_reviewer_on_its_own_model_role_is_answered_by_that_model_with_its_deadline():
    from dataclasses import replace

    from reins.runtime.llm.models import ROLE_POLICIES, ModelSet

    on_planner = replace(PRIVACY, model_role="planner")
    planner = OfflineModel(responders={PRIVACY.contract: privacy_rule})
    models = ModelSet.uniform(OfflineModel()).with_models({"planner": planner})
    out = build_graph(models=models, reviewers=(*FOUR.specs[:3], on_planner)).invoke(DIGEST)
    assert out["review_bundle"]["coverage"]["privacy"] == "completed" and out["run_status"] == "blocked"
    served = models.serving("reviewer", by="planner")
    assert served.get("reviewer") is planner and served.policy("reviewer") == ROLE_POLICIES["planner"]
    assert models.serving("reviewer", by="reviewer") is models


def test_a_reviewer_naming_an_unknown_model_role_is_refused_when_built():
    from dataclasses import replace

    with pytest.raises(ValueError, match="model_role 'auditor' is not one of the model roles"):
        build_graph(models=OfflineModel(), reviewers=(*FOUR.specs[:3], replace(PRIVACY, model_role="auditor")))
