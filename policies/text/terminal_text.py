"""Text a model wrote, made safe to print on a terminal (pure).

A model's text can carry terminal escape sequences (clear the screen, move the cursor, recolour,
rewrite the window title, hyperlinks) and control characters (a carriage return that overwrites a
line), so it could fake a green ``status: pass``. ``printable`` removes whole escape sequences
first (so none leaves its parameters behind as text), then every other control character, and the
bidirectional overrides that reorder what is shown; line breaks and tabs stay.
"""

from __future__ import annotations

import re

# ESC-introduced sequences: CSI (ESC [ … final), OSC / DCS / SOS / PM / APC strings (ended by BEL or
# ESC \, or by the end of the text), and the two-character escapes (ESC followed by one byte).
_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]?                 # CSI
    | \x9b[0-?]*[ -/]*[@-~]?                 # 8-bit CSI
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) # OSC, DCS, SOS, PM, APC (7- and 8-bit)
      [^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?
    | \x1b[ -/]*[0-~]?                        # any other escape (and a lone ESC)
    """,
    re.X,
)
# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embedding / override /
# isolate characters.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """``text`` without escape sequences or control characters (newlines and tabs kept; a CRLF
    becomes a newline)."""
    value = "" if text is None else str(text)
    if value.isprintable() or not _CONTROLS.search(value):
        return value
    value = value.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", value))


# Two columns on one line (a help line): some text, a gap of two spaces or more, more text.
_SECOND_COLUMN = re.compile(r"\S {2,}(?=\S)")


def wrapped(text: str, width: int) -> str:
    """Every line of ``text`` broken at spaces to ``width`` columns, never inside a word (a word
    longer than the width stays whole on a line of its own). A continuation lines up under the
    line's text: past its indent, or under the second column of a line laid out in two (as help
    lines are), when that column starts in the left half."""
    import textwrap

    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        column = _SECOND_COLUMN.search(line, indent)
        hang = column.end() if column and column.end() <= width // 2 else indent
        lines.append(textwrap.fill(line, width, subsequent_indent=" " * hang, break_long_words=False,
                                   break_on_hyphens=False))
    return "\n".join(lines)
