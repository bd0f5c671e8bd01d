"""Review bundle (status matrix, dedupe, conflicts, ranking, missing) and the post-review decision."""

import pytest
from tests.delivery.delivery_builders import boundary, finding, general, risk

from reins.policies.delivery.review_bundle import (
    build_review_bundle,
    coverage_of,
    find_conflicts,
    merge_findings,
    normalise,
    resolve_run_status,
)
from reins.policies.delivery.revision import derive_post_review_decision, next_steps, post_review_allowed, status_after_revision


def outcome(role, review=None, status="completed"):
    return {"role": role, "tool": role, "outcome": status, "review": review if status == "completed" else None}


ALL_PASS = [outcome("general", general()), outcome("risk", risk()), outcome("boundary", boundary())]
REQUIRED = finding()
ADVISORY = finding("Consider a dark-mode banner.", kind="observation", requirement="advisory", severity="low")
ISSUE_ADVISORY = finding("Tune the copy.", kind="issue", requirement="advisory")
OBSERVATION_REQUIRED = finding("Odd note.", kind="observation", requirement="required")


def with_general(review):
    return [outcome("general", review), ALL_PASS[1], ALL_PASS[2]]


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (ALL_PASS, "pass"),
        ([], "failed"),
        ([outcome(r, status="contract_failure") for r in ("general", "risk", "boundary")], "failed"),
        ([outcome("general", status="timeout"), outcome("risk", status="execution_failed"),
          outcome("boundary", status="contract_failure")], "failed"),
        # hard blockers win over everything but total failure
        ([outcome("general", general()), outcome("risk", risk("blocker")), outcome("boundary", boundary())], "blocked"),
        ([outcome("general", general()), outcome("risk", risk()), outcome("boundary", boundary("blocked"))], "blocked"),
        (with_general(general("blocked")), "blocked"),
        ([outcome("general", status="timeout"), outcome("risk", status="timeout"),
          outcome("boundary", boundary("blocked"))], "blocked"),
        ([outcome("general", general("needs_changes")), outcome("risk", risk("blocker")),
          outcome("boundary", status="timeout")], "blocked"),
        # incomplete coverage
        ([ALL_PASS[0], outcome("risk", status="execution_failed"), ALL_PASS[2]], "needs_review"),
        ([ALL_PASS[0], outcome("risk", status="timeout"), outcome("boundary", status="timeout")], "needs_review"),
        ([ALL_PASS[0], ALL_PASS[1]], "needs_review"),  # a role nobody reported for is missing
        ([outcome("general", general("needs_changes")), outcome("risk", status="timeout"), ALL_PASS[2]], "needs_review"),
        # required changes
        (with_general(general("needs_changes")), "needs_changes"),
        (with_general(general("pass", "misaligned")), "needs_changes"),
        (with_general(general("pass", findings=[REQUIRED])), "needs_changes"),
        ([ALL_PASS[0], outcome("risk", risk("medium", [REQUIRED])), ALL_PASS[2]], "needs_changes"),
        # advisory or observation-only findings do not change the status
        (with_general(general("pass", findings=[ADVISORY, ISSUE_ADVISORY, OBSERVATION_REQUIRED])), "pass"),
        # caution verdicts (risk high, boundary needs_review) never end in pass: a person decides
        ([ALL_PASS[0], outcome("risk", risk("high")), outcome("boundary", boundary("needs_review"))], "needs_review"),
        ([ALL_PASS[0], outcome("risk", risk("high")), ALL_PASS[2]], "needs_review"),
        ([ALL_PASS[0], ALL_PASS[1], outcome("boundary", boundary("needs_review"))], "needs_review"),
        ([ALL_PASS[0], outcome("risk", risk("medium")), ALL_PASS[2]], "pass"),
        ([outcome("general", general("needs_changes")), outcome("risk", risk("high")), ALL_PASS[2]], "needs_review"),
        ([ALL_PASS[0], outcome("risk", risk("high", [REQUIRED])), ALL_PASS[2]], "needs_review"),
        ([ALL_PASS[0], outcome("risk", risk("blocker")), outcome("boundary", boundary("needs_review"))], "blocked"),
        ([outcome("general", status="timeout"), outcome("risk", risk("high")), ALL_PASS[2]], "needs_review"),
    ],
)
def test_status_matrix(outcomes, expected):
    bundle = build_review_bundle(outcomes)
    assert bundle["status"] == expected
    assert resolve_run_status(coverage_of(outcomes), {o["role"]: o["review"] for o in outcomes if o["review"]},
                              bundle["findings"]) == expected


@pytest.mark.parametrize(
    ("outcomes", "reasons"),
    [
        (ALL_PASS, []),
        ([ALL_PASS[0], outcome("risk", risk("high")), outcome("boundary", boundary("needs_review"))],
         ["the risk review rated the delivery high risk",
          "the boundary review asks for a person to review a guarded area"]),
        ([ALL_PASS[0], outcome("risk", status="timeout"), ALL_PASS[2]], ["review(s) not completed: risk"]),
        (with_general(general("needs_changes", findings=[REQUIRED])),
         ["the general review asks for changes", "required findings"]),
        ([outcome(r, status="timeout") for r in ("general", "risk", "boundary")], ["no review completed"]),
        ([ALL_PASS[0], outcome("risk", risk("blocker")), ALL_PASS[2]], ["a review reported a hard blocker"]),
    ],
)
def test_status_reasons(outcomes, reasons):
    assert build_review_bundle(outcomes)["status_reasons"] == reasons


def test_status_ignores_markdown_and_summary_text():
    loud = general()
    loud["markdown"] = "# BLOCKED\n\nstatus: blocked, severity: blocker, needs_changes"
    loud["summary"] = "blocked blocker misaligned"
    assert build_review_bundle(with_general(loud))["status"] == "pass"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Recovery state has no acceptance criterion.", "recovery state has no acceptance criterion"),
     ("  Recovery   STATE, has no acceptance-criterion!", "recovery state has no acceptance criterion")],
)
def test_normalise(text, expected):
    assert normalise(text) == expected


def test_duplicates_merge_with_all_sources_and_the_strictest_classification():
    a = finding("Recovery state has no acceptance criterion.", requirement="advisory", kind="observation", severity="low")
    b = finding("recovery state has NO acceptance criterion", severity="high")
    other_target = finding("Recovery state has no acceptance criterion.", targets=("tasks",))
    merged = merge_findings({"general": general(findings=[a]), "risk": risk(findings=[b, other_target])})
    assert len(merged) == 2
    top = merged[0]
    assert top["sources"] == ["general", "risk"]
    assert (top["severity"], top["finding_type"], top["requirement"]) == ("high", "issue", "required")
    assert top["finding_id"] == "F01" and merged[1]["finding_id"] == "F02"


@pytest.mark.parametrize(
    ("severities", "expected_order"),
    [
        (["low", "blocker", "medium"], ["blocker", "medium", "low"]),
        (["info", "high", "high", "medium"], ["high", "high", "medium", "info"]),
    ],
)
def test_findings_are_ranked_by_severity(severities, expected_order):
    items = [finding(f"finding {i}", severity=s) for i, s in enumerate(severities)]
    merged = merge_findings({"general": general(findings=items)})
    assert [f["severity"] for f in merged] == expected_order
    assert [f["finding_id"] for f in merged] == [f"F{i:02d}" for i in range(1, len(items) + 1)]


def test_ranking_puts_required_issues_first_within_a_severity():
    items = [finding("advice", kind="observation", requirement="advisory"), finding("must fix")]
    merged = merge_findings({"general": general(findings=items)})
    assert [f["description"] for f in merged] == ["must fix", "advice"]


@pytest.mark.parametrize(
    ("reviews", "kinds"),
    [
        ({"general": general(), "risk": risk(), "boundary": boundary()}, []),
        ({"general": general(), "risk": risk(), "boundary": boundary("blocked")}, ["verdict", "verdict"]),
        ({"general": general(), "risk": risk("blocker"), "boundary": boundary("needs_review")}, ["verdict"]),
        ({"general": general("needs_changes"), "risk": risk("high"), "boundary": boundary()}, []),
        ({"general": general(findings=[finding("same", requirement="advisory", kind="observation")]),
          "risk": risk(findings=[finding("same")])}, ["finding"]),
        ({"general": general(findings=[finding("same", severity="info")]),
          "risk": risk(findings=[finding("same", severity="high")])}, ["finding"]),
        ({"general": general(findings=[finding("same", severity="medium")]),
          "risk": risk(findings=[finding("same", severity="high")])}, []),
    ],
)
def test_conflicts(reviews, kinds):
    conflicts = find_conflicts(reviews, merge_findings(reviews))
    assert [c["kind"] for c in conflicts] == kinds


def test_bundle_names_missing_reviews_and_keeps_the_others():
    outcomes = [ALL_PASS[0], outcome("risk", status="execution_failed"), outcome("boundary", status="timeout")]
    bundle = build_review_bundle(outcomes)
    assert bundle["coverage"] == {"general": "completed", "risk": "execution_failed", "boundary": "timeout"}
    assert bundle["missing"] == [{"role": "risk", "outcome": "execution_failed"}, {"role": "boundary", "outcome": "timeout"}]
    assert [c["role"] for c in bundle["completed"]] == ["general"]


def test_blockers_and_high_risks_are_listed():
    bundle = build_review_bundle([
        ALL_PASS[0],
        outcome("risk", risk("high", [finding("Passwords are stored.", severity="high", kind="observation",
                                              requirement="advisory")])),
        outcome("boundary", boundary("blocked")),
    ])
    kinds = [(i["kind"], i["source"]) for i in bundle["blockers_and_high_risks"]]
    assert kinds == [("blocker", "boundary"), ("high_risk", "risk"), ("high_risk", "risk")]


# ------------------------------------------------------------------------------ post-review decision

F_PLAN = {**finding(), "finding_id": "F01"}
F_TASKS = {**finding("No task for recovery.", targets=("tasks",)), "finding_id": "F02"}
F_BOTH = {**finding("Recovery missing everywhere.", targets=("plan", "tasks")), "finding_id": "F03"}
F_ADVICE = {**ADVISORY, "finding_id": "F04"}
F_ISSUE_ADVICE = {**ISSUE_ADVISORY, "finding_id": "F05"}


def guidance(*targets):
    return {"rationale": "r", "recommendations": [
        {"target": t, "summary": f"supervisor says {t}", "required_actions": [f"guided {t}"],
         "acceptance_suggestion": "ok"} for t in targets]}


@pytest.mark.parametrize(
    ("status", "findings", "advice", "action", "targets", "sources"),
    [
        ("pass", [F_ADVICE], None, "finalize", [], []),
        ("needs_changes", [F_PLAN], None, "revise", ["plan"], [["F01"]]),
        ("needs_changes", [F_TASKS], None, "revise", ["tasks"], [["F02"]]),
        ("needs_changes", [F_TASKS, F_PLAN], None, "revise", ["plan", "tasks"], [["F01"], ["F02"]]),
        ("needs_changes", [F_BOTH], None, "revise", ["plan", "tasks"], [["F03"], ["F03"]]),
        # the supervisor naming the wrong target changes nothing
        ("needs_changes", [F_PLAN], guidance("tasks"), "revise", ["plan"], [["F01"]]),
        ("needs_changes", [F_TASKS], guidance("plan"), "revise", ["tasks"], [["F02"]]),
        # targets only from issue + required findings
        ("needs_changes", [F_ADVICE, F_ISSUE_ADVICE], guidance("plan"), "finalize", [], []),
        # general needs_changes without actionable findings: nothing to revise
        ("needs_changes", [], guidance("plan", "tasks"), "finalize", [], []),
        # revision only when needs_changes
        ("needs_review", [F_PLAN], None, "finalize", [], []),
        ("pass", [F_PLAN], None, "finalize", [], []),
        ("blocked", [F_PLAN], guidance("plan"), "blocked", [], []),
        ("failed", [], None, "finalize", [], []),
    ],
)
def test_derive_post_review_decision(status, findings, advice, action, targets, sources):
    decision = derive_post_review_decision(status, findings, advice)
    assert decision["action"] == action
    assert decision["revision_targets"] == targets
    assert [r["source_finding_ids"] for r in decision["requests"]] == sources
    assert [r["request_key"] for r in decision["requests"]] == [f"runtime-{t}-revision" for t in targets]


def test_guidance_only_words_a_request_for_a_target_the_findings_chose():
    decision = derive_post_review_decision("needs_changes", [F_PLAN], guidance("plan", "tasks"))
    (request,) = decision["requests"]
    assert request["summary"] == "supervisor says plan"
    assert request["required_actions"] == [F_PLAN["suggested_action"], "guided plan"]
    assert request["guidance_used"] is True


@pytest.mark.parametrize(
    ("status", "outcomes", "expected"),
    [
        ("needs_changes", [{"status": "revised"}], "needs_review"),
        ("needs_changes", [{"status": "failed"}, {"status": "revised"}], "needs_review"),
        ("needs_changes", [{"status": "failed"}], "needs_changes"),
        ("needs_changes", [], "needs_changes"),
        ("pass", [], "pass"),
    ],
)
def test_status_after_revision_is_never_pass(status, outcomes, expected):
    assert status_after_revision(status, outcomes) == expected


@pytest.mark.parametrize("status", ["pass", "clarification_required", "needs_changes", "needs_review", "blocked", "failed"])
def test_every_status_has_next_steps(status):
    assert next_steps(status, revised=False)
    assert "by hand" in next_steps(status, revised=True)[0]


ALL_DONE = {"general": "completed", "risk": "completed", "boundary": "completed"}


@pytest.mark.parametrize(
    ("coverage", "status", "allowed"),
    [
        (ALL_DONE, "pass", True),
        (ALL_DONE, "needs_changes", True),
        (ALL_DONE, "blocked", False),
        (ALL_DONE, "failed", False),
        ({**ALL_DONE, "risk": "timeout"}, "needs_review", False),
        ({**ALL_DONE, "risk": "contract_failure"}, "needs_changes", False),
        ({**ALL_DONE, "boundary": "execution_failed"}, "pass", False),
        ({}, "pass", False),
    ],
)
def test_post_review_only_after_three_completed_reviews_and_no_hard_stop(coverage, status, allowed):
    assert post_review_allowed({"coverage": coverage, "status": status}) is allowed
