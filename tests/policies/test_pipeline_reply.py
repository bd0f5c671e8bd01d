"""What a chat reply shows of a pipeline run, and which slash input starts a pipeline (pure rules)."""

from __future__ import annotations

import pytest

from reins.policies.assistant.pipeline_reply import (
    BODY_LIMIT,
    SECTION_CHARS,
    TASKLIST_CHARS,
    delivery_outcome,
    delivery_spent,
    tasklist_outcome,
    tasklist_spent,
)
from reins.policies.assistant.slash_commands import pipeline_to_run

TASKS = "# v1 Tasklist\n\n- [ ] Step one\n- [ ] Step two"
REPORT = (
    "# Delivery report\n\n## Summary\n\nTwo phases, four tasks.\n\n## Conclusion\n\n**Status: blocked** — stop.\n\n"
    "## Plan\n\nlong plan body\n\n## Merged findings\n\n- F1 (blocker): persists raw data\n\n"
    "## Blockers and high risks\n\n- F1 persists raw data\n\n## Next steps\n\n- fix it"
)


@pytest.mark.parametrize(
    ("result", "status", "present", "absent"),
    [
        ({"final_decision": "final", "summary": "s", "artifact": {"markdown": TASKS}}, "final", ["s", "- [ ] Step two"], []),
        ({"final_decision": "stopped", "summary": "stopped: a question", "message": "Which release?", "artifact": None},
         "stopped", ["Which release?"], ["- [ ]"]),
        ({"final_decision": "final_with_manual_review_items", "summary": "s", "artifact": {"markdown": TASKS},
          "manual_review_items": [{"title": f"Item {i}", "detail": "check", "severity": "warning"} for i in range(7)]},
         "final_with_manual_review_items", ["Manual review items:", "- Item 4: check", "… and 2 more"], ["Item 5"]),
        ({"final_decision": "final", "summary": "token sk-abcdefghijklmnopqrstuvwx leaked", "artifact": None},
         "final", ["leaked"], ["sk-abcdefghijklmnopqrstuvwx"]),
        ({}, "unknown", [], ["None"]),
    ],
)
def test_tasklist_reply(result, status, present, absent):
    got_status, body = tasklist_outcome(result)
    assert got_status == status
    for text in present:
        assert text in body
    for text in absent:
        assert text not in body
    assert len(body) <= BODY_LIMIT


def test_a_long_task_list_is_cut_to_its_bound():
    _, body = tasklist_outcome({"final_decision": "final", "summary": "s", "artifact": {"markdown": "- [ ] x\n" * 2000}})
    assert len(body) <= len("s\n\n") + TASKLIST_CHARS and body.endswith("…")


@pytest.mark.parametrize(
    ("report", "present", "absent"),
    [
        (REPORT, ["Two phases, four tasks.", "## Conclusion", "**Status: blocked**", "## Blockers and high risks",
                  "F1 persists raw data", "## Merged findings"], ["long plan body", "fix it"]),
        ("# Delivery report\n\n## Summary\n\nAll good.\n\n## Conclusion\n\nPass.\n\n## Merged findings\n\nNone.\n\n"
         "## Blockers and high risks\n\nNone.", ["All good.", "Pass."], ["## Merged findings", "## Blockers"]),
        ("plain text report", ["plain text report"], []),
    ],
)
def test_delivery_reply_shows_summary_conclusion_blockers_and_findings(report, present, absent):
    status, body = delivery_outcome({"run_status": "blocked", "report": report})
    assert status == "blocked"
    for text in present:
        assert text in body
    for text in absent:
        assert text not in body


def test_each_delivery_section_is_bounded():
    long = "- finding\n" * 1000
    _, body = delivery_outcome({"run_status": "needs_changes",
                                "report": f"## Summary\n\ns\n\n## Merged findings\n\n{long}\n## Conclusion\n\nc"})
    section = body.split("## Merged findings\n\n", 1)[1]
    assert len(section) <= SECTION_CHARS and len(body) <= BODY_LIMIT


@pytest.mark.parametrize(
    ("text", "available", "expected"),
    [
        ("/tasklist docs://versions/v0.2.0-ready.md", {"tasklist", "delivery-chain"}, "tasklist"),
        ("/delivery-chain add SSO", {"tasklist", "delivery-chain"}, "delivery-chain"),
        ("/DELIVERY-CHAIN add SSO", {"delivery-chain"}, "delivery-chain"),
        ("/delivery-chain add SSO", {"tasklist"}, None),  # not installed: answered by rule
        ("/tasklist", {"tasklist"}, None),  # usage
        ("/help", {"tasklist", "delivery-chain"}, None),
        ("/frobnicate x", {"tasklist", "delivery-chain"}, None),
        ("what is /tasklist?", {"tasklist"}, None),
        ("", {"tasklist"}, None),
    ],
)
def test_which_slash_input_starts_a_pipeline(text, available, expected):
    assert pipeline_to_run(text, available) == expected


@pytest.mark.parametrize(
    ("spent", "result", "expected"),
    [
        # a tasklist run: its contract metrics, and the one read of its plan
        (tasklist_spent, {"contract_metrics": {"tasklist.draft": {"business_calls": 2}}},
         ({"tasklist.draft": {"business_calls": 2}}, 1)),
        (tasklist_spent, {}, ({}, 1)),
        # a delivery: the report's per-contract metrics and the delegations its budget counted
        (delivery_spent, {"metrics": {"per_contract": {"delivery.plan": {"business_calls": 1}},
                                      "budget": {"used": {"calls": 1, "tool_calls": 2}}}},
         ({"delivery.plan": {"business_calls": 1}}, 2)),
        (delivery_spent, {"metrics": {"per_contract": "broken", "budget": None}}, ({}, 0)),
        (delivery_spent, {}, ({}, 0)),
    ],
)
def test_what_a_pipeline_spent_is_read_from_its_output(spent, result, expected):
    assert spent(result) == expected
