"""Reading a file the user names (flow rules, persona, MCP configuration, evaluation records): whole,
once, bounded, and refused in one line that names the variable and the file.

The size is bounded by reading at most ``limit + 1`` bytes, never by trusting ``stat`` (a device or
a ``/proc`` file reports a size that is not what it yields); anything but a regular file (``/dev/zero``,
a FIFO, a directory) is refused before it is read, and a FIFO is opened without blocking, so a
command never waits for a writer that does not come.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_CHUNK = 64 * 1024


class FileRefused(ValueError):
    """A user's file that cannot be used: the message is one line, ``VARIABLE: file: why``."""


def refusal(variable: str, path: str | Path, why: str) -> FileRefused:
    return FileRefused(f"{variable}: {Path(path).name or str(path)}: {why}")


def read_bounded(path: str | Path, *, variable: str, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; ``FileRefused`` otherwise."""
    source = Path(path).expanduser()
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise refusal(variable, source, "no such file") from None
    except OSError as error:
        raise refusal(variable, source, f"cannot be read ({error.strerror or type(error).__name__})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise refusal(variable, source, "not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as error:
        raise refusal(variable, source, f"cannot be read ({error.strerror or type(error).__name__})") from None
    finally:
        os.close(fd)
    if left <= 0:
        raise refusal(variable, source, f"larger than {limit} bytes")
    return b"".join(chunks)


def read_bounded_text(path: str | Path, *, variable: str, limit: int) -> str:
    """``read_bounded`` decoded as UTF-8."""
    raw = read_bounded(path, variable=variable, limit=limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise refusal(variable, path, "not UTF-8 text") from None
