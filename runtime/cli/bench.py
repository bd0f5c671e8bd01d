"""``reins bench``: the benchmarks of ``benchmarks/run.py`` (ratios measured within one run)."""

from __future__ import annotations

import argparse
import importlib

from runtime.cli.errors import UserError

BENCHMARKS = ("review_parallelism", "guardrail_overhead", "redaction_scaling", "checkpoint_memory", "call_overhead")


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("bench", help="run the benchmarks (prints ratios measured in one run)")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"any of: {', '.join(BENCHMARKS)} (default: all)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        raise UserError(f"unknown benchmark {unknown[0]!r}; choose from: {', '.join(BENCHMARKS)}")
    # benchmarks/ is part of the checkout (the app is installed editable), not of the runtime package.
    module = importlib.import_module("benchmarks.run")
    for name in args.names or BENCHMARKS:
        getattr(module, name)()
    return 0
