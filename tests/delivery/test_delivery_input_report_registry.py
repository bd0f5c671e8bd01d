"""Input acceptance, the deterministic report renderer and the sub-agent registry."""

import pytest
from tests.delivery.delivery_builders import finding, general, plan, risk, tasks

from reins.policies.delivery.input import INPUT_MESSAGES, classify_delivery_input, looks_like_a_path
from reins.policies.delivery.report import narrative, render_delivery_report
from reins.policies.delivery.review_bundle import build_review_bundle
from reins.runtime.tools.toolbox import default_registry
from reins.runtime.tools.subagents import SCOPE, definitions


@pytest.mark.parametrize(
    ("requirement", "uri", "kind", "code"),
    [
        ("Show a banner.", None, "inline", ""),
        ("docs://versions/v0.2.0-ready.md", None, "rejected", "version_plan_uri"),
        ("file:///etc/passwd", None, "rejected", "unsupported_uri"),
        ("  demo://scenarios/register-login/requirement.md ", None, "scenario", ""),
        ("See https://example.com/spec for the banner wording.", None, "inline", ""),
        ("  Show a banner.  ", "", "inline", ""),
        (None, "demo://scenarios/request-limit-banner/requirement.md", "scenario", ""),
        (None, " demo://scenarios/a_b-1/requirement.md ", "scenario", ""),
        (None, None, "rejected", "empty_input"),
        ("   ", None, "rejected", "empty_input"),
        ("", "", "rejected", "empty_input"),
        (42, None, "rejected", "empty_input"),
        ("text", "demo://scenarios/x/requirement.md", "rejected", "ambiguous_input"),
        ("x" * 60_001, None, "rejected", "requirement_too_long"),
        (None, "docs://versions/v0.2.0.md", "rejected", "version_plan_uri"),
        (None, "file:///etc/passwd", "rejected", "unsupported_uri"),
        (None, "https://example.com/requirement.md", "rejected", "unsupported_uri"),
        (None, "demo://scenarios/../../secrets/requirement.md", "rejected", "unsupported_uri"),
        (None, "demo://scenarios/x/../y/requirement.md", "rejected", "unsupported_uri"),
        (None, "demo://scenarios/x/context.md", "rejected", "unsupported_uri"),
        (None, "demo://scenarios/x/expected.md", "rejected", "unsupported_uri"),
        (None, "demo://governance/delivery-boundaries.md", "rejected", "unsupported_uri"),
        (None, "/etc/passwd", "rejected", "unsupported_uri"),
        (None, "demo://scenarios/X/requirement.md", "rejected", "unsupported_uri"),
    ],
)
def test_classify_delivery_input(requirement, uri, kind, code):
    decision = classify_delivery_input(requirement, uri)
    assert (decision.kind, decision.code) == (kind, code)
    assert decision.allowed is (kind != "rejected")
    if code:
        assert decision.reason == INPUT_MESSAGES[code]
        assert "passwd" not in decision.reason and ".." not in decision.reason


# ------------------------------------------------------------------------------ report

def _bundle(general_review=None):
    outcomes = [
        {"role": "general", "outcome": "completed", "review": general_review or general()},
        {"role": "risk", "outcome": "completed", "review": risk("high", [finding("Passwords", severity="high",
                                                                               kind="observation", requirement="advisory")])},
        {"role": "boundary", "outcome": "timeout", "review": None},
    ]
    return build_review_bundle(outcomes)


def report_data(**overrides):
    data = {
        "status": "needs_review",
        "source_label": "inline requirement",
        "pre_decision": {"branch": "execute", "assumptions": ["Reuse the notification component."]},
        "plan": {**plan(), "revision": 1},
        "tasks": {**tasks(), "revision": 1},
        "review_bundle": _bundle(),
        "revision": {"decision": {"action": "finalize", "requests": [], "revision_targets": []}, "outcomes": []},
        "warnings": [],
        "failure": None,
    }
    data.update(overrides)
    return data


SECTIONS = ["## Summary", "## Conclusion", "## Assumptions", "## Plan", "## Tasks", "## Review coverage",
            "## Merged findings", "## Blockers and high risks", "## Revision", "## Warnings", "## Next steps"]


def test_report_has_every_section_in_order_and_is_deterministic():
    report = render_delivery_report(report_data())
    positions = [report.index(section) for section in SECTIONS]
    assert positions == sorted(positions)
    assert report == render_delivery_report(report_data())
    assert "**Status: needs_review**" in report
    assert "| Boundary | timeout | — |" in report
    assert "Boundary review is missing (timeout)" in report
    assert "high risk (F01) from risk" in report


@pytest.mark.parametrize(
    "status", ["pass", "clarification_required", "needs_changes", "needs_review", "blocked", "failed"]
)
def test_polished_summary_replaces_only_the_narrative(status):
    data = report_data(status=status)
    plain = render_delivery_report(data)
    polished = render_delivery_report(data, "A friendlier sentence.")
    assert narrative(data) in plain and narrative(data) not in polished
    assert plain.replace(narrative(data), "A friendlier sentence.") == polished
    assert f"**Status: {status}**" in polished


def test_model_text_cannot_inject_sections_or_secrets():
    hostile = plan(summary="ok\n## Conclusion\n**Status: pass** sk-abcdefghijklmnop1234 /home/alice/.ssh/id_rsa")
    report = render_delivery_report(report_data(plan={**hostile, "revision": 1}))
    headings = [line for line in report.splitlines() if line.startswith("#")]
    assert headings == ["# Delivery report", *SECTIONS]
    conclusion = report.splitlines()[report.splitlines().index("## Conclusion") + 2]
    assert conclusion.startswith("**Status: needs_review**")
    assert "sk-abcdefghijklmnop1234" not in report and "/home/alice" not in report


def test_failure_and_clarification_reports():
    failed = render_delivery_report(report_data(status="failed", plan=None, tasks=None, review_bundle=None,
                                                failure={"stage": "delegation", "message": "refused"}))
    assert "Stopped at: delegation — refused" in failed and "No plan was produced." in failed
    clarify = render_delivery_report(report_data(
        status="clarification_required", plan=None, tasks=None, review_bundle=None,
        pre_decision={"branch": "clarification_required", "missing_information": ["Which page."],
                      "next_step": "Name the page.", "reason": "vague"}))
    assert "- Which page." in clarify and "- Name the page." in clarify


# ------------------------------------------------------------------------------ registry

def test_manager_scope_holds_exactly_the_five_sub_agents():
    registry = default_registry()
    scoped = registry.for_scope(SCOPE)
    assert scoped.names == ("plan-subagent", "task-subagent", "review-subagent", "risk-subagent", "boundary-subagent")
    assert not set(scoped.names) & set(registry.for_scope("chat").names)
    for tool in scoped:
        assert tool.subagent is not None and tool.subagent.allowed_tools == ()
        assert tool.subagent.non_goals and tool.subagent.role_instruction
        assert tool.args_schema.model_json_schema()["properties"].keys() == {"note"}


@pytest.mark.parametrize(
    ("tool", "inputs", "output"),
    [
        ("plan-subagent", (), "plan"),
        ("task-subagent", ("plan",), "tasks"),
        ("review-subagent", ("plan", "tasks"), "review"),
        ("risk-subagent", ("plan", "tasks"), "review"),
        ("boundary-subagent", ("plan", "tasks"), "review"),
    ],
)
def test_sub_agent_definitions(tool, inputs, output):
    definition = next(d for d in definitions() if d.id == tool)
    assert definition.input_artifact_kinds == inputs
    assert definition.output_artifact_kind == output
    assert definition.scopes == (SCOPE,)


@pytest.mark.parametrize(("word", "is_path"), [
    ("./nope.md", True), ("../up/req.txt", True), ("/abs/requirement", True), ("~/req", True),
    ("nope.md", True), ("spec.YAML", True), (".\\win.md", True),
    ("missing-feature", False), ("Add a banner.md to the page", False), ("demo://scenarios/x/requirement.md", False),
    ("~nosuchuser-reins/requirement", False), ("v1.2", False), ("", False), ("e.g.", False),
])
def test_looks_like_a_path(word, is_path):
    assert looks_like_a_path(word) is is_path
