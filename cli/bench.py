"""``reins bench``: the benchmarks of ``benchmarks/run.py`` (ratios measured within one run)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys

from reins.cli.errors import EXIT_FAILED, UserError
from reins.cli.render import progress_bar

BENCHMARKS = ("review_parallelism", "guardrail_overhead", "redaction_scaling", "checkpoint_memory", "call_overhead", "checkpoint_cost",
              "concurrent_ainvoke", "concurrent_server", "cli_start", "mcp_session_overhead")


def bench_failure(name: str, error: BaseException) -> str:
    """A failed benchmark, diagnosable in one line: the node it escaped from, the exception's class
    and its message, redacted and cut (a benchmark's own errors say what went wrong: the run's
    status, the server's log)."""
    from reins.runtime.llm.failures import safe_error
    from reins.runtime.llm.failures import failed_stage

    stage = failed_stage(error)
    where = f" in node {stage}" if stage else ""
    return f"benchmark {name} failed{where}: {safe_error(error, 300)}"


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("bench", help="run the benchmarks (prints ratios measured in one run)")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"any of: {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--json", action="store_true", help='print {"benchmarks": {name: ratio}}; the lines go to stderr')
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        raise UserError(f"unknown benchmark {unknown[0]!r}; choose from: {', '.join(BENCHMARKS)}")
    # benchmarks/ is part of the checkout (the app is installed editable), not of the installed packages.
    module = importlib.import_module("reins.benchmarks.run")
    ratios = {}
    names = args.names or BENCHMARKS
    with progress_bar(len(names)) as advance:
        for name in names:
            try:
                if args.json:
                    with contextlib.redirect_stdout(sys.stderr):
                        ratios[name] = getattr(module, name)()
                else:
                    getattr(module, name)()
            except Exception as error:
                raise UserError(bench_failure(name, error), EXIT_FAILED) from error
            advance(f"benchmark {name} done")
    if args.json:
        print(json.dumps({"benchmarks": ratios}))
    return 0
