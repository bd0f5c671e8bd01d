"""Is a free-text answer running away in a loop? (pure)

A small model can fall into repeating itself: the same line (or the same few lines) over and over,
or one short token run without end (``00000…``, ``the the the …``). Left alone it writes until its
output bound or its timeout — the 1.5B model looped on one line of a task-list draft for 600 s, and
the retry started the same generation again. The runtime reads a streamed free-text answer as it
comes and stops it when ``runaway`` says it loops; the answer is then treated as cut off (its one
repair asks again, shorter, with more room), never asked again unchanged.

Rules, on the text so far (only its tail is read, so checking as it grows stays cheap):

- ``repeated_line``: the last lines (blank ones skipped) are one block of 1..``MAX_BLOCK_LINES``
  lines repeated back to back, ``LINE_REPEATS`` lines in all (at least ``MIN_BLOCK_REPEATS`` times);
- ``repeated_token``: the last ``TOKEN_WINDOW`` characters repeat with a period of at most
  ``MAX_TOKEN_PERIOD`` characters (one short run, however it is spaced).

A list whose items differ, a table, a rule line, a few equal lines in a row: none of them loop.
"""

from __future__ import annotations

REPEATED_LINE = "repeated_line"
REPEATED_TOKEN = "repeated_token"

LINE_REPEATS = 12  # lines of the repeated block, all told
MIN_BLOCK_REPEATS = 4
MAX_BLOCK_LINES = 4
TOKEN_WINDOW = 400
MAX_TOKEN_PERIOD = 40
_TAIL_CHARS = 8000  # enough for LINE_REPEATS long lines


def _repeated_lines(text: str) -> bool:
    lines = [line.strip() for line in text[-_TAIL_CHARS:].splitlines() if line.strip()]
    if text and not text.endswith("\n") and lines:
        lines.pop()  # the line being written is not complete yet
    for block in range(1, MAX_BLOCK_LINES + 1):
        repeats = max(MIN_BLOCK_REPEATS, -(-LINE_REPEATS // block))
        span = block * repeats
        if len(lines) < span:
            continue
        tail = lines[-span:]
        if all(tail[i] == tail[i % block] for i in range(span)):
            return True
    return False


def _repeated_token(text: str) -> bool:
    window = text[-TOKEN_WINDOW:]
    if len(window) < TOKEN_WINDOW:
        return False
    for period in range(1, MAX_TOKEN_PERIOD + 1):
        if window[period:] == window[:-period]:
            return True
    return False


def runaway(text: str) -> str | None:
    """``repeated_line`` or ``repeated_token`` when the text so far ends in a loop, else None."""
    if _repeated_token(text):
        return REPEATED_TOKEN
    if _repeated_lines(text):
        return REPEATED_LINE
    return None
