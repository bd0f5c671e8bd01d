"""The loop detector of streamed free text (policies.models.runaway_text), table-driven."""

import pytest

from reins.policies.models.runaway_text import REPEATED_LINE, REPEATED_TOKEN, runaway

DRAFT = "# v0.2.0 Tasklist\n\n## Goals\n" + "".join(f"- [ ] Task {n}: wire step {n} and test it\n" for n in range(40))
TABLE = "| a | b |\n|---|---|\n" + "".join(f"| {n} | {n * n} |\n" for n in range(60))
LOOP_LINE = "- [ ] Add the banner component to the settings page\n"


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("", None),
        ("short answer", None),
        (DRAFT, None),  # items that differ
        (TABLE, None),
        ("---\n" * 3 + "text\n", None),  # a few equal lines are no loop
        (LOOP_LINE * 11 + "\n", None),  # one short of the repeats
        (DRAFT + LOOP_LINE * 12, REPEATED_LINE),  # the 1.5B's draft: one line over and over
        (DRAFT + (LOOP_LINE + "\n") * 12, REPEATED_LINE),  # blank lines between do not hide it
        (DRAFT + ("## Goals\n- same item\n") * 6, REPEATED_LINE),  # a two-line block, six times
        (DRAFT + ("a\nb\nc\n") * 3, None),  # a three-line block needs four rounds
        (DRAFT + ("a\nb\nc\n") * 4, REPEATED_LINE),
        (DRAFT + LOOP_LINE * 12 + "- [ ] Something else", REPEATED_LINE),  # the line being written is ignored
        (DRAFT + LOOP_LINE * 12 + "- [ ] Something else\n", None),  # it moved on
        ('{"name": "ping", "arguments": {"ok": true}}.' + "0" * 400, REPEATED_TOKEN),  # llama.cpp padding
        ("the " * 100, REPEATED_TOKEN),
        (DRAFT + "word " * 79, None),  # 395 characters: under the window
        ("." * 399, None),
        ("." * 400, REPEATED_TOKEN),
        ("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ" * 10, None),  # a period longer than a token run
    ],
)
def test_a_loop_is_named_and_nothing_else_is(text, verdict):
    assert runaway(text) == verdict


def test_checking_the_text_as_it_grows_stops_at_the_first_loop():
    text, stopped_at = DRAFT, None
    for n in range(1, 100):
        text += LOOP_LINE
        if runaway(text):
            stopped_at = n
            break
    assert stopped_at == 12
