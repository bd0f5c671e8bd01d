"""Model-written text reaches the terminal without escape sequences or control characters."""

from __future__ import annotations

import pytest

from reins.policies.text.terminal_text import printable

CASES = [
    ("plain", "status: pass", "status: pass"),
    ("newlines-and-tabs", "a\n\tb\n", "a\n\tb\n"),
    ("crlf", "a\r\nb", "a\nb"),
    ("clear-screen", "\x1b[2J\x1b[Hstatus: pass", "status: pass"),
    ("fake-green", "\x1b[32mstatus: pass\x1b[0m", "status: pass"),
    ("carriage-return-overwrite", "status: failed\rstatus: pass", "status: failedstatus: pass"),
    ("osc-title-bel", "\x1b]0;owned\x07text", "text"),
    ("osc-hyperlink-st", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"),
    ("unterminated-osc", "ok\x1b]0;title never ends", "ok"),
    ("eight-bit-csi", "\x9b2Jx", "x"),
    ("dcs", "\x1bPq#0;2;0;0;0\x1b\\after", "after"),
    ("lone-esc", "a\x1b", "a"),
    ("two-char-escape", "a\x1bcb", "ab"),
    ("charset-escape", "a\x1b(Bb", "ab"),
    ("bell-backspace-null", "a\x07b\x08c\x00d", "abcd"),
    ("del-and-c1", "a\x7fb\x85c", "abc"),
    ("bidi-override", "pass\u202eliaf", "passliaf"),
    ("unicode-kept", "版本 v0.2 — ✓ done", "版本 v0.2 — ✓ done"),
    ("none", None, ""),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_printable(text, expected):
    assert printable(text) == expected


def test_printable_is_idempotent_and_leaves_no_escape():
    for _, text, _ in CASES:
        once = printable(text)
        assert printable(once) == once
        assert "\x1b" not in once and "\r" not in once


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("short line", 20, "short line"),
        ("Reins assistant — thread chat-1. Type /help for commands", 30,
         "Reins assistant — thread\nchat-1. Type /help for\ncommands"),
        ("  budget: calls 3/52 · tokens 35/135168", 20, "  budget: calls 3/52\n  · tokens 35/135168"),
        # a two-column line goes on under its second column
        ("  /tasklist <plan>  build a reviewed task list", 40,
         "  /tasklist <plan>  build a reviewed\n                    task list"),
        # a word longer than the width stays whole
        ("see https://example.org/a/very/long/path now", 16, "see\nhttps://example.org/a/very/long/path\nnow"),
        ("one\n\ntwo words here", 8, "one\n\ntwo\nwords\nhere"),
    ],
)
def test_wrapped_breaks_only_at_spaces(text, width, expected):
    from reins.policies.text.terminal_text import wrapped

    assert wrapped(text, width) == expected
