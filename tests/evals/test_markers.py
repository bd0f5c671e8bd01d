"""How the simple baselines read free text: marker lines and the fixed pipeline's status (tables)."""

from __future__ import annotations

import pytest

from reins.evals.markers import fixed_status, normalise, read_marker, review_verdict, single_agent_reading


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("pass", "pass"), ("PASS", "pass"), ("Needs Changes.", "needs_changes"), ("needs-review", "needs_review"),
     ("**blocked**", "blocked"), ("  clarification required ", "clarification_required")],
)
def test_normalise(raw, normal):
    assert normalise(raw) == normal


@pytest.mark.parametrize(
    ("text", "label", "value"),
    [
        ("STATUS: pass", "STATUS", "pass"),
        ("# Plan\n\nSTATUS: Needs changes.", "STATUS", "needs_changes"),
        ("STATUS: pass\nSTATUS: blocked", "STATUS", "blocked"),  # the last one counts
        ("STATUS: Looks good to ship", "STATUS", None),  # rephrased
        ("STATUS: approved", "STATUS", None),  # out-of-vocabulary value
        ("Status verdict - pass", "STATUS", None),  # renamed marker
        ("Overall the plan is fine.", "STATUS", None),  # no marker
        ("RISK: blocker", "RISK", "blocker"),
        ("RISK: needs_changes", "RISK", None),  # a value from another vocabulary
        ("READINESS: clarification_required", "READINESS", "clarification_required"),
    ],
)
def test_read_marker(text, label, value):
    assert read_marker(text, label) == value


@pytest.mark.parametrize(
    ("role", "text", "verdict"),
    [("general", "x\nVERDICT: needs_changes", "needs_changes"), ("risk", "VERDICT: high", "high"),
     ("boundary", "VERDICT: passed", "passed"), ("boundary", "VERDICT: pass", None),
     ("general", None, None), ("risk", "Verdict summary - blocker", None)],
)
def test_review_verdict(role, text, verdict):
    assert review_verdict(role, text) == verdict


@pytest.mark.parametrize(
    ("readiness", "verdicts", "status"),
    [
        ("ready", {"general": "pass", "risk": "low", "boundary": "passed"}, "pass"),
        ("ready", {"general": "needs_changes", "risk": "low", "boundary": "passed"}, "needs_changes"),
        ("ready", {"general": "pass", "risk": "blocker", "boundary": "passed"}, "blocked"),
        ("ready", {"general": "pass", "risk": "low", "boundary": "blocked"}, "blocked"),
        ("ready", {"general": "blocked", "risk": None, "boundary": None}, "blocked"),
        ("clarification_required", {"general": "pass", "risk": "low", "boundary": "passed"}, "clarification_required"),
        ("clarification_required", {"general": "pass", "risk": "low", "boundary": "blocked"}, "blocked"),
        # missing or unreadable verdicts raise no objection: the weakness this baseline stands for
        ("ready", {"general": None, "risk": None, "boundary": None}, "pass"),
        ("ready", {"general": "pass", "risk": None, "boundary": "passed"}, "pass"),
        (None, {"general": "pass", "risk": "high", "boundary": "needs_review"}, "pass"),
    ],
)
def test_fixed_status(readiness, verdicts, status):
    assert fixed_status(readiness, verdicts) == status


def test_single_agent_reading():
    text = "# Delivery\n\nGENERAL: pass\nRISK: blocker\nBOUNDARY: Nothing crosses a boundary\n\nSTATUS: blocked"
    assert single_agent_reading(text) == {
        "status": "blocked",
        "verdicts": {"general": "pass", "risk": "blocker", "boundary": None},
        "blocker_seen": True,
    }
