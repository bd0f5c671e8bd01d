"""The caps on the user's persona for the assistant: the first one broken is named, nothing is cut."""

from __future__ import annotations

import pytest

from reins.policies.assistant.persona import (
    MAX_EXAMPLE_ANSWER_CHARS,
    MAX_EXAMPLE_REQUEST_CHARS,
    MAX_EXAMPLES,
    MAX_INSTRUCTIONS_CHARS,
    persona_problem,
)

OK = ("what is 2+2?", "4.")


@pytest.mark.parametrize(
    ("instructions", "examples", "problem"),
    [
        ("", [], None),
        ("x" * MAX_INSTRUCTIONS_CHARS, [OK] * MAX_EXAMPLES, None),  # every cap reached, none broken
        ("x" * (MAX_INSTRUCTIONS_CHARS + 1), [], f"instructions: {MAX_INSTRUCTIONS_CHARS + 1} characters, at most 2000"),
        ("", [OK] * (MAX_EXAMPLES + 1), f"examples: {MAX_EXAMPLES + 1} given, at most {MAX_EXAMPLES}"),
        ("", [OK, ("r" * (MAX_EXAMPLE_REQUEST_CHARS + 1), "a")],
         f"examples.1.request: {MAX_EXAMPLE_REQUEST_CHARS + 1} characters, at most {MAX_EXAMPLE_REQUEST_CHARS}"),
        ("", [("r" * MAX_EXAMPLE_REQUEST_CHARS, "a" * (MAX_EXAMPLE_ANSWER_CHARS + 1))],
         f"examples.0.answer: {MAX_EXAMPLE_ANSWER_CHARS + 1} characters, at most {MAX_EXAMPLE_ANSWER_CHARS}"),
        # The instructions are checked first: the one line names them, not a later field.
        ("x" * (MAX_INSTRUCTIONS_CHARS + 1), [OK] * (MAX_EXAMPLES + 1), "instructions: 2001 characters, at most 2000"),
    ],
)
def test_persona_caps(instructions, examples, problem):
    assert persona_problem(instructions, examples) == problem
