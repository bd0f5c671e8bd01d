"""The ``reins`` command line. Each sub-command lives in its own module with a ``register`` function.

Start-up stays fast: sub-command modules import only the standard library and light project modules
at the top; LangGraph, LangChain and the OpenAI client are imported inside the handlers that need
them, so ``--help``, ``--version`` and argument errors answer without loading them.

With ``--json`` anywhere on the command line, stdout carries exactly one JSON object, errors
included: ``{"error": {"code": ..., "message": ...}}`` (codes: ``bad_arguments``, ``bad_input``,
``blocked``, ``failed``, ``interrupted``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence

from reins.policies.text.redaction import redact
from reins.policies.text.terminal_text import printable
from reins.cli.errors import EXIT_BAD_INPUT, EXIT_BLOCKED, EXIT_FAILED, EXIT_INTERRUPTED, UserError
from reins.runtime.resources import ResourceError
from reins.runtime.config.settings import SettingsError

# Sub-command modules, in the order ``reins --help`` lists them.
COMMAND_MODULES = (
    "reins.cli.doctor",
    "reins.cli.graph",
    "reins.cli.deliver",
    "reins.cli.tasklist",
    "reins.cli.resume",
    "reins.cli.runs",
    "reins.cli.replay",
    "reins.cli.chat",
    "reins.cli.eval",
    "reins.cli.bench",
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-reins")
    except PackageNotFoundError:  # running from a checkout without an install
        return "0+unknown"


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked (importlib.metadata is slow
    to import, and every other command starts without it)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help", "")))

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"reins {_version()}")
        parser.exit()


class ArgumentError(Exception):
    """Bad command-line arguments (argparse's message, plus the usage of the command concerned)."""

    def __init__(self, message: str, usage: str):
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse, but an argument error is raised (so ``--json`` can report it) instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ArgumentError(message, self.format_usage())


ERROR_CODES = {EXIT_BAD_INPUT: "bad_input", EXIT_BLOCKED: "blocked", EXIT_FAILED: "failed"}


def _report(as_json: bool, code: str, message: str, prefix: str = "error") -> None:
    """One redacted line on stderr, or (with ``--json``) one JSON object on stdout."""
    message = printable(redact(message, 500))
    if as_json:
        print(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False))
    else:
        print(f"reins: {prefix}: {message}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="reins",
        description="Reins: controlled multi-agent pipelines on LangGraph — the model proposes, the runtime decides.",
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="<command>")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from reins.cli.quiet_stdout import quiet_stdout

    with quiet_stdout():  # a closed or full stdout ends the command quietly, with its own exit code
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from reins.cli.env_file import load_env_file

    program = argv is None  # run as the `reins` program, not called from Python
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    load_env_file()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except ArgumentError as error:
        if not as_json:
            sys.stderr.write(error.usage)
        _report(as_json, "bad_arguments", str(error))
        return EXIT_BAD_INPUT
    if not getattr(args, "handler", None):
        if as_json:
            _report(True, "bad_arguments", "name a command; see reins --help")
        else:
            parser.print_help()
        return EXIT_BAD_INPUT
    as_json = bool(getattr(args, "json", as_json))
    try:
        return int(args.handler(args) or 0)
    except (UserError, SettingsError, ResourceError) as error:
        code = getattr(error, "exit_code", EXIT_BAD_INPUT)
        _report(as_json, ERROR_CODES.get(code, "bad_input"), str(error))
        return code
    except KeyboardInterrupt as stop:  # RunInterrupted says where the run was saved and how to resume it
        if str(stop) or as_json:
            _report(as_json, "interrupted", str(stop) or "interrupted", prefix="interrupted")
        else:  # Ctrl-C before any run began: nothing was saved, nothing more to say
            print("reins: interrupted", file=sys.stderr)
        if program:
            _exit_now(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except Exception as error:  # never a traceback in front of a user, nor a provider's message
        from reins.runtime.llm.failures import failure_line

        _report(as_json, "failed", failure_line(error), prefix="failed")
        return EXIT_FAILED


def _exit_now(code: int) -> None:
    """End the process at once: a model call abandoned by Ctrl-C may still hold a worker thread that
    the interpreter would otherwise wait for at exit. Everything that matters is saved already."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
