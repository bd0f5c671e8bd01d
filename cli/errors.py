"""Exit codes, the one table from a run's outcome to its exit code, and the one error type a command
raises for bad input.

Every command maps its graph's result to one of the outcomes below and exits with that outcome's
code, so one cause gives one exit code whichever graph it happened in (the exit-code table in docs/cli.md).
"""

from collections.abc import Mapping

EXIT_OK = 0  # pass / final
EXIT_NEEDS_ATTENTION = 1  # needs_review, needs_changes, clarification_required, manual review items
EXIT_BAD_INPUT = 2  # bad arguments, unknown URI, invalid configuration
EXIT_BLOCKED = 3  # blocked / stopped at a boundary
EXIT_FAILED = 4  # the run failed
EXIT_PAUSED = 5  # waiting for a human decision (resume with `reins resume`)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, the shell's convention); the run is saved

EXIT_FOR_OUTCOME: Mapping[str, int] = {
    "pass": EXIT_OK,  # delivery passed, the task list is final, the assistant succeeded
    "needs_attention": EXIT_NEEDS_ATTENTION,  # needs review / changes, a clarification, manual review items
    "bad_input": EXIT_BAD_INPUT,  # refused before any model call
    "blocked": EXIT_BLOCKED,  # a boundary or a blocker stopped it, or a person rejected it
    # A model call failed (provider error, timeout, context window, invalid output after its one
    # repair) or a policy refused what the model proposed.
    "failed": EXIT_FAILED,
    "paused": EXIT_PAUSED,
}


def exit_code(outcome: str) -> int:
    """The exit code of an outcome; an outcome this table does not know is a failure."""
    return EXIT_FOR_OUTCOME.get(outcome, EXIT_FAILED)


class UserError(Exception):
    """Bad input from the user: shown as one redacted line, with a non-zero exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.exit_code = exit_code
