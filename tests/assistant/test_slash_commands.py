"""policies/assistant/slash_commands.py: commands are recognised by rule; unknown ones get a clear answer."""

import pytest

from reins.policies.assistant.slash_commands import (
    help_text,
    parse_slash,
    pipeline_verdict,
    unknown_command_message,
    usage_problem,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/help", ("help", "")),
        ("  /HELP  ", ("help", "")),
        ("/tasklist docs://versions/v1.md", ("tasklist", "docs://versions/v1.md")),
        ("/delivery-chain Add a login page\nwith two fields", ("delivery-chain", "Add a login page\nwith two fields")),
        ("/frobnicate now", ("frobnicate", "now")),
        ("/usr/bin is slow", None),
        ("what is 6/3?", None),
        ("/", None),
        ("/ help", None),
        ("", None),
    ],
)
def test_parse_slash(text, expected):
    command = parse_slash(text)
    assert (None if command is None else (command.name, command.argument)) == expected


@pytest.mark.parametrize(
    ("text", "known", "problem"),
    [
        ("/help", True, None),
        ("/tasklist", True, "Usage: /tasklist"),
        ("/tasklist docs://versions/x.md", True, None),
        ("/tasklist anything", True, None),  # whether the plan reference is valid is the pipeline's rule
        ("/delivery-chain", True, "Usage: /delivery-chain"),
        ("/delivery-chain add SSO", True, None),
        ("/nope", False, None),
    ],
)
def test_known_commands_and_usage(text, known, problem):
    command = parse_slash(text)
    assert command.known is known
    found = usage_problem(command)
    assert (found is None) if problem is None else found.startswith(problem)


def test_help_lists_every_command_and_unknown_names_them():
    text = help_text()
    for usage in ("/help", "/tasklist docs://versions/<plan>.md", "/delivery-chain <requirement>"):
        assert usage in text
    message = unknown_command_message("frobnicate")
    assert message.startswith("Unknown command /frobnicate.") and "/help" in message


@pytest.mark.parametrize(
    ("command", "status", "verdict"),
    [
        ("tasklist", "final", "success"),
        ("tasklist", "final_with_manual_review_items", "partial"),
        ("tasklist", "stopped", "partial"),
        ("tasklist", "blocked", "failure"),
        ("tasklist", None, "failure"),
        ("delivery-chain", "pass", "success"),
        ("delivery-chain", "needs_changes", "partial"),
        ("delivery-chain", "clarification_required", "partial"),
        ("delivery-chain", "blocked", "failure"),
        ("delivery-chain", "surprise", "failure"),
        ("other", "pass", "failure"),
    ],
)
def test_pipeline_verdict(command, status, verdict):
    assert pipeline_verdict(command, status) == verdict
