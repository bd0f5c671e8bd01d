"""Exit codes and the one error type a command raises for bad input."""

EXIT_OK = 0  # pass / final
EXIT_NEEDS_ATTENTION = 1  # needs_review, needs_changes, clarification_required, manual review items
EXIT_BAD_INPUT = 2  # bad arguments, unknown URI, invalid configuration
EXIT_BLOCKED = 3  # blocked / stopped at a boundary
EXIT_FAILED = 4  # the run failed
EXIT_PAUSED = 5  # waiting for a human decision (resume with `reins resume`)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, the shell's convention); the run is saved


class UserError(Exception):
    """Bad input from the user: shown as one redacted line, with a non-zero exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.exit_code = exit_code
