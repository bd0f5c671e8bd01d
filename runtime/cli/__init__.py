"""The ``reins`` command line. Each sub-command lives in its own module with a ``register`` function."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from policies.redaction import redact
from runtime.cli.errors import EXIT_BAD_INPUT, EXIT_FAILED, UserError
from runtime.resources import ResourceError
from runtime.settings import SettingsError

# Sub-command modules, in the order ``reins --help`` lists them.
COMMAND_MODULES = (
    "runtime.cli.doctor",
    "runtime.cli.graph",
    "runtime.cli.deliver",
    "runtime.cli.tasklist",
    "runtime.cli.resume",
    "runtime.cli.chat",
    "runtime.cli.eval",
    "runtime.cli.bench",
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-reins")
    except PackageNotFoundError:  # running from a checkout without an install
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reins",
        description="Reins: controlled multi-agent pipelines on LangGraph — the model proposes, the runtime decides.",
    )
    parser.add_argument("--version", action="version", version=f"reins {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="<command>")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return int(args.handler(args) or 0)
    except (UserError, SettingsError, ResourceError) as error:
        print(f"reins: error: {redact(error, 500)}", file=sys.stderr)
        return getattr(error, "exit_code", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        print("reins: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # never a traceback in front of a user
        print(f"reins: failed: {redact(f'{type(error).__name__}: {error}', 500)}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
