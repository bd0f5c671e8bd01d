"""Text given as a file or on standard input: ``--file PATH``, ``-``, or a lone argument naming a file.

A requirement or a message is usually longer than a shell line. ``--file -`` and a lone ``-`` read
standard input; a single positional argument that names an existing file is read too, with a
one-line note on stderr (so ``reins deliver ./requirement.md`` never plans the path itself); a lone
argument that reads as a file name but names no file is refused rather than planned as text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from reins.cli.errors import UserError
from reins.policies.delivery.input import looks_like_a_path

MAX_INPUT_BYTES = 128 * 1024  # the same bound as a bundled document


def read_text(source: str, stdin: TextIO | None = None) -> str:
    """The text of the file ``source`` (``-``: standard input), bounded and UTF-8; never empty."""
    if source == "-":
        stream = stdin or sys.stdin
        if getattr(stream, "isatty", lambda: False)():
            print("reins: reading standard input; end it with Ctrl-D", file=sys.stderr)
        text = stream.read(MAX_INPUT_BYTES + 1)
        name = "standard input"
    else:
        path = _path(source)
        name = path.name or source
        if not _is_file(path):
            raise UserError(f"{name}: no such file")
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise UserError(f"{name} is larger than {MAX_INPUT_BYTES // 1024} KiB")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{name} is not UTF-8 text") from None
        except OSError as error:
            raise UserError(f"{name}: cannot be read ({error.strerror or type(error).__name__})") from None
    if len(text.encode("utf-8")) > MAX_INPUT_BYTES:
        raise UserError(f"{name} is larger than {MAX_INPUT_BYTES // 1024} KiB")
    if not text.strip():
        raise UserError(f"{name} is empty")
    return text


def text_argument(words: list[str], file: str | None, what: str, stdin: TextIO | None = None) -> str:
    """The text of ``--file``, of ``-``, of a lone argument naming a file (said on stderr), else the
    words joined; empty when nothing was given. A lone argument that looks like a path to a missing
    file is an error naming it."""
    if file is not None:
        if words:
            raise UserError(f"give either the {what} or --file, not both")
        return read_text(file, stdin)
    if words == ["-"]:
        return read_text("-", stdin)
    if len(words) == 1 and "://" not in words[0] and "\n" not in words[0] and _is_file(_path(words[0])):
        print(f"reins: note: reading the {what} from the file {words[0]} (quote text to use it as written)",
              file=sys.stderr)
        return read_text(words[0], stdin)
    if len(words) == 1 and looks_like_a_path(words[0]):
        name = _path(words[0]).name or words[0]  # the file's name: an absolute path is redacted anyway
        raise UserError(f"{name}: no such file; give the {what} as text or name an existing file")
    return " ".join(words).strip()


def _path(source: str) -> Path:
    try:
        return Path(source).expanduser()
    except RuntimeError:  # ~name of no known user: the text as written
        return Path(source)


def _is_file(path: Path) -> bool:
    """Whether ``path`` names a readable regular file; text that cannot be a file name (longer than
    the system allows, a NUL byte) is not one."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
