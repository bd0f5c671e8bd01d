"""``reins graph <name>``: the Mermaid diagram of a compiled graph."""

from __future__ import annotations

import argparse

from reins.cli.errors import UserError
from reins.cli.render import print_json
from reins.cli.diagrams import graph_entry_points, mermaid


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("graph", help="print the Mermaid diagram of a graph")
    parser.add_argument("name", help=f"one of: {', '.join(graph_entry_points())}")
    parser.add_argument("--json", action="store_true", help='print {"graph": name, "mermaid": source}')
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.name not in graph_entry_points():
        raise UserError(f"unknown graph {args.name!r}; choose one of: {', '.join(graph_entry_points())}")
    if args.json:
        print_json({"graph": args.name, "mermaid": mermaid(args.name)})
    else:
        print(mermaid(args.name))
    return 0
