"""policies/tools/approval.py: one approval trait per tool, from its declaration; an MCP server's
annotations count only when the user trusts them."""

from __future__ import annotations

import pytest

from reins.policies.tools.approval import APPROVALS, approval_for, approval_note, hint_read_only, mcp_approval, mcp_read_only


@pytest.mark.parametrize(
    ("read_only", "trusted", "asks_user", "approval"),
    [
        (True, False, False, "run"),  # changes nothing (calculator, read_doc)
        (False, False, False, "ask"),  # a side effect (forget)
        (False, True, False, "run"),  # trusted by its declaration (remember)
        (True, True, False, "run"),
        (True, False, True, "question"),  # ask_user: a question, never a run
        (False, True, True, "question"),
    ],
)
def test_approval_for(read_only, trusted, asks_user, approval):
    assert approval_for(read_only=read_only, trusted=trusted, asks_user=asks_user) == approval


READ_ONLY = {"readOnlyHint": True}


@pytest.mark.parametrize(
    ("tool", "annotations", "trust", "trust_annotations", "approval"),
    [
        ("write", READ_ONLY, (), False, "ask"),  # a hostile server's claim alone never runs unasked
        ("write", READ_ONLY, (), True, "run"),  # the user believes this server's annotations
        ("write", {"readOnlyHint": False}, (), True, "ask"),
        ("write", {"readOnlyHint": "yes"}, (), True, "ask"),  # only an explicit true counts
        ("write", None, (), True, "ask"),
        ("write", None, ("write",), False, "run"),  # trusted by name
        ("write", {"destructiveHint": True}, ("write",), False, "run"),  # the user's word wins
        ("other", None, ("write",), False, "ask"),
    ],
)
def test_an_mcp_tool_runs_unasked_only_on_the_users_word(tool, annotations, trust, trust_annotations, approval):
    assert mcp_approval(tool, annotations, trust=trust, trust_annotations=trust_annotations) == approval


@pytest.mark.parametrize(
    ("annotations", "hint", "trusted_read_only"),
    [(None, False, False), ({}, False, False), ({"readOnlyHint": None}, False, False),
     ({"readOnlyHint": "yes"}, False, False), ({"readOnlyHint": True}, True, True)],
)
def test_only_an_explicit_read_only_hint_counts_and_only_when_trusted(annotations, hint, trusted_read_only):
    assert hint_read_only(annotations) is hint
    assert mcp_read_only(annotations, trust_annotations=True) is trusted_read_only
    assert mcp_read_only(annotations, trust_annotations=False) is False


@pytest.mark.parametrize(("approval", "note"), [("run", ""), ("ask", " (asks first)"), ("question", " (asks you)")])
def test_the_note_help_and_doctor_show(approval, note):
    assert approval in APPROVALS and approval_note(approval) == note
