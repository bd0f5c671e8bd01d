"""Skill drafts from experience: when a draft is due, and the person's answer to its review."""

from __future__ import annotations

import pytest

from reins.policies.assistant.skill_drafts import check_draft_decision, draft_due, topic_key, topic_of

OK = ("success", ["rate", "convert"])


@pytest.mark.parametrize(
    ("history", "drafted", "due"),
    [
        ([OK, OK], [], False),
        ([OK, OK, OK], [], True),
        ([OK, ("success", ["convert", "rate"]), ("success", ["Rate", "convert"])], [], True),  # order and case ignored
        ([OK, OK, ("partial", ["rate", "convert"])], [], False),  # only successes count
        ([OK, OK, ("success", ["rate"])], [], False),  # a different topic
        ([OK, OK, OK], [["convert", "rate"]], False),  # already drafted (pending, approved or rejected)
    ],
)
def test_draft_due(history, drafted, due):
    assert draft_due(["rate", "convert"], history, drafted) is due


def test_an_empty_topic_is_never_due_and_keys_are_stable():
    assert draft_due([], [("success", [])] * 5, []) is False
    assert topic_key(topic_of(["b", "a"])) == topic_key(("a", "b")) != topic_key(("a",))
    assert "." not in topic_key(("a",))


DRAFT = {"name": "rate-convert", "description": "Convert with a rate.", "instructions": "Fetch the rate first."}


@pytest.mark.parametrize(
    ("answer", "kind", "error"),
    [
        ({"type": "approve"}, "approve", None),
        ({"type": "reject", "reason": "not useful"}, "reject", None),
        ({"type": "reject"}, "reject", None),
        ({"type": "edit", "draft": DRAFT}, "edit", None),
        ({"type": "edit", "draft": {**DRAFT, "name": "Bad Name"}}, None, "the edited draft is invalid (name)"),
        ({"type": "edit"}, None, "the edited draft is invalid (draft)"),
        ({"type": "approve", "draft": DRAFT}, None, "approve takes only type"),
        ({"type": "maybe"}, None, "answer with a type among approve, edit, reject"),
        ("approve", None, "answer with a type among approve, edit, reject"),
        ({"type": "reject", "reason": "x" * 501}, None, "reason must be text of at most 500 characters"),
    ],
)
def test_check_draft_decision(answer, kind, error):
    decision = check_draft_decision(answer)
    assert (decision.type, decision.error) == (kind, error)
