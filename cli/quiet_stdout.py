"""A command's stdout that may go away: ``reins … | head`` closes the pipe after a few lines, and
``reins … > /dev/full`` (or a full disk) cannot take the output. Either way the command ends
quietly, with its own outcome's exit code: the rest of its output is dropped, never turned into a
"connection failed" error or a traceback at exit."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# The reader went away (EPIPE) or the output cannot be stored (ENOSPC, EDQUOT).
GONE = frozenset({errno.EPIPE, errno.ENOSPC, errno.EDQUOT})


class QuietStdout:
    """Stands for ``sys.stdout`` while a command runs; after the first write that finds the output
    gone, later writes are dropped."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except OSError as error:
                self._lost(error)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except OSError as error:
                self._lost(error)

    def _lost(self, error: OSError) -> None:
        if error.errno not in GONE:
            raise error
        self.gone = True
        try:  # what the stream still buffers goes nowhere at exit, instead of failing again there
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a file (a test's capture): nothing to redirect
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def quiet_stdout() -> Iterator[QuietStdout]:
    """``sys.stdout`` as a ``QuietStdout`` while the block runs; flushed (quietly) at its end."""
    original = sys.stdout
    guarded = QuietStdout(original)
    sys.stdout = guarded  # type: ignore[assignment]
    try:
        yield guarded
    finally:
        guarded.flush()
        sys.stdout = original
