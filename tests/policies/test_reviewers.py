"""The reviewer table (policies/delivery/reviewers.py) and the rules that read it with a fourth reviewer."""

from __future__ import annotations

import dataclasses
import pytest

from tests.delivery.privacy_reviewer import FOUR, PRIVACY, PrivacyReview, privacy  # noqa: E402

from reins.policies.delivery.delegation import (  # noqa: E402
    DEFAULT_POLICY,
    DelegationLedger,
    ProposedCall,
    ReviewGroupPolicy,
    check_delegation,
    for_reviewers,
    validate_exact_reviewer_roles,
)
from reins.policies.delivery.report import narrative, render_delivery_report  # noqa: E402
from reins.policies.delivery.review_bundle import build_review_bundle  # noqa: E402
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers, count_word, listed, reviewer_table  # noqa: E402
from reins.schemas.delivery import REVIEWER_ROLES, SupervisorPreDecision, pre_decision_schema  # noqa: E402
from tests.delivery.delivery_builders import boundary, general, risk  # noqa: E402


def test_the_default_table_is_the_three_reviewers_of_the_schemas():
    assert DEFAULT_REVIEWERS.roles == REVIEWER_ROLES == ("general", "risk", "boundary")
    assert DEFAULT_REVIEWERS.tools == ("review-subagent", "risk-subagent", "boundary-subagent")
    assert [spec.contract for spec in DEFAULT_REVIEWERS] == [f"delivery.{r}_review" for r in REVIEWER_ROLES]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"role": "Privacy"}, "snake_case"),
        ({"tool": "privacy_subagent"}, "kebab-case"),
        ({"contract": "privacy_review"}, "delivery.<snake_case>"),
        ({"schema": dict}, "pydantic model"),
        ({"verdict_field": "status"}, "lacks the field(s) status"),
        ({"role": "data"}, "must pin role"),
        ({"levels": {"clear": "ok", "blocked": "blocker"}}, "every value of privacy_status"),
        ({"levels": {"clear": "ok", "needs_dpo": "worry", "blocked": "blocker"}}, "one of ok, concern, blocker"),
        ({"levels": {"clear": "ok", "needs_dpo": "concern", "blocked": "concern"}}, "at least one verdict must block"),
    ],
)
def test_a_broken_spec_is_refused_when_written(change, problem):
    with pytest.raises(ValueError, match="reviewer") as raised:
        dataclasses.replace(PRIVACY, **change)
    assert problem in str(raised.value)


@pytest.mark.parametrize("name", ["role", "tool", "contract"])
def test_a_table_needs_distinct_reviewers(name):
    twin = PRIVACY if name == "role" else dataclasses.replace(PRIVACY, **{name: getattr(DEFAULT_REVIEWERS.specs[0], name)})
    specs = (*DEFAULT_REVIEWERS, twin, PRIVACY) if name == "role" else (*DEFAULT_REVIEWERS, twin)
    with pytest.raises(ValueError, match=f"its own {name}"):
        Reviewers(specs)


def test_tables_are_given_as_specs_or_not_at_all():
    assert reviewer_table(None) is DEFAULT_REVIEWERS
    assert reviewer_table((*DEFAULT_REVIEWERS, PRIVACY)) == FOUR
    with pytest.raises(TypeError):
        reviewer_table(["privacy"])
    with pytest.raises(ValueError, match="at least one"):
        Reviewers(())


def test_default_texts_of_a_spec_and_the_prose_helpers():
    assert PRIVACY.concern_reason == "the privacy review asks for a person's review"
    assert PRIVACY.blocker_detail == "privacy review blocked the delivery"
    assert (count_word(3), count_word(4), count_word(12)) == ("three", "four", "12")
    assert (listed(["a"]), listed(["a", "b", "c"])) == ("a", "a, b and c")


def outcome(role, review=None, status="completed"):
    return {"role": role, "tool": role, "outcome": status, "review": review if status == "completed" else None}


THREE_PASS = [outcome("general", general()), outcome("risk", risk()), outcome("boundary", boundary())]


@pytest.mark.parametrize(
    ("fourth", "status", "reasons"),
    [
        (outcome("privacy", privacy("clear")), "pass", []),
        (outcome("privacy", privacy("blocked")), "blocked", ["a review reported a hard blocker"]),
        (outcome("privacy", privacy("needs_dpo")), "needs_review", ["the privacy review asks for a person's review"]),
        (outcome("privacy", status="timeout"), "needs_review", ["review(s) not completed: privacy"]),
        (None, "needs_review", ["review(s) not completed: privacy"]),
    ],
)
def test_the_status_matrix_reads_a_fourth_reviewer(fourth, status, reasons):
    bundle = build_review_bundle([*THREE_PASS, *([fourth] if fourth else [])], FOUR)
    assert (bundle["status"], bundle["status_reasons"]) == (status, reasons)
    assert list(bundle["coverage"]) == ["general", "risk", "boundary", "privacy"]
    # the same outcomes under the default table: the fourth is not a reviewer there
    assert build_review_bundle([*THREE_PASS, *([fourth] if fourth else [])])["status"] == "pass"


def test_a_fourth_blocker_is_listed_and_conflicts_with_clear_reviews():
    bundle = build_review_bundle([*THREE_PASS, outcome("privacy", privacy("blocked"))], FOUR)
    assert bundle["blockers_and_high_risks"] == [
        {"kind": "blocker", "source": "privacy", "detail": "privacy review blocked the delivery"}]
    assert [c["roles"] for c in bundle["conflicts"]] == [["privacy", "general"], ["privacy", "risk"], ["privacy", "boundary"]]
    report = render_delivery_report({"status": bundle["status"], "review_bundle": bundle}, reviewers=FOUR)
    assert "| Privacy | completed | blocked |" in report
    assert "4 of 4 reviews completed" in narrative({"review_bundle": bundle, "plan": None, "tasks": {"tasks": []}}, FOUR)


def test_the_pass_line_counts_the_reviewers():
    bundle = build_review_bundle([*THREE_PASS, outcome("privacy", privacy())], FOUR)
    assert "passed all four reviews" in render_delivery_report({"status": "pass", "review_bundle": bundle}, reviewers=FOUR)
    assert "passed all three reviews" in render_delivery_report({"status": "pass", "review_bundle": {}})


def test_a_policy_fits_a_table_and_keeps_its_own_tightening():
    four = for_reviewers(DEFAULT_POLICY, FOUR)
    assert four.review_group.tools == FOUR.tools and four.review_group.max_review_calls == 4
    assert four.max_tool_calls == 6 and four.input_artifacts["privacy-subagent"] == ("plan", "tasks")
    assert "privacy-subagent" in four.allowed_tools
    tight = for_reviewers(dataclasses.replace(DEFAULT_POLICY, max_tool_calls=4), FOUR)
    assert tight.max_tool_calls == 5  # still one call short of a full run
    assert for_reviewers(DEFAULT_POLICY, DEFAULT_REVIEWERS) is DEFAULT_POLICY
    other = dataclasses.replace(DEFAULT_POLICY, review_group=ReviewGroupPolicy(tools=("x-subagent",)))
    with pytest.raises(ValueError, match="other reviewers"):
        for_reviewers(other, FOUR)


def test_the_review_group_rules_name_the_configured_reviewers():
    policy = for_reviewers(DEFAULT_POLICY, FOUR)
    ledger = DelegationLedger(executed=("plan-subagent", "task-subagent"), artifacts=frozenset({"plan", "tasks"}))
    three = [ProposedCall(tool) for tool in DEFAULT_REVIEWERS.tools]
    refused = check_delegation(three, ledger, policy)
    assert refused.code == "review_group_incomplete"
    assert refused.reason == "The review group must call the general, risk, boundary and privacy reviewers together."
    assert check_delegation([*three, ProposedCall("privacy-subagent")], ledger, policy).allowed
    assert check_delegation(three, ledger).allowed  # the default group is the three
    inexact = validate_exact_reviewer_roles(["general", "risk", "boundary"], FOUR.roles)
    assert inexact.reason == "The supervisor did not declare exactly the general, risk, boundary and privacy reviewers."
    assert validate_exact_reviewer_roles(["privacy", "boundary", "risk", "general"], FOUR.roles).allowed


def test_the_pre_decision_admits_exactly_the_tables_roles():
    assert pre_decision_schema(tuple((s.role, s.focus) for s in DEFAULT_REVIEWERS)) is SupervisorPreDecision
    schema = pre_decision_schema(tuple((s.role, s.focus) for s in FOUR))
    assert schema.__name__ == "SupervisorPreDecision" and issubclass(schema, SupervisorPreDecision)
    execute = {"branch": "execute", "assumptions": ["a"], "planning_focus": "p", "task_focus": "t",
               "review_focus": {role: "f" for role in FOUR.roles}, "reviewer_roles": list(FOUR.roles),
               "stage_intents": [{"stage": s, "objective": "o"} for s in ("plan", "tasks", "review")]}
    assert schema.model_validate(execute).reviewer_roles == list(FOUR.roles)
    with pytest.raises(ValueError):
        SupervisorPreDecision.model_validate(execute)  # the default schema knows no privacy reviewer
    with pytest.raises(ValueError):
        schema.model_validate({**execute, "reviewer_roles": [*FOUR.roles, "security"]})
    focus = schema.model_json_schema()["$defs"]["ReviewFocus"]["properties"]["privacy"]
    assert focus["description"] == PRIVACY.focus
    assert PrivacyReview.model_fields["privacy_status"]
