"""``reins runs [--limit N] [--wide] [--prune DAYS] [--json]``: recent runs in the configured checkpointer.

One line per run (thread, graph, status, age) that fits 80 columns, as ``gh run list`` does;
``--wide`` adds when it was updated and the command that continues it, ``--json`` everything. ``--prune DAYS``
deletes every thread whose last checkpoint is older than DAYS days (and, for SQLite, gives the space
back).
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone

from reins.policies.text.redaction import redact
from reins.cli.errors import EXIT_OK, UserError
from reins.cli.render import print_json, table, write, write_lines
from reins.runtime.config.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("runs", help="list recent runs (graph, status, paused/resumable); --prune DAYS")
    parser.add_argument("--limit", type=int, default=20, metavar="N", help="how many threads to list (default 20)")
    parser.add_argument("--prune", type=float, metavar="DAYS", help="delete threads idle for more than DAYS days")
    parser.add_argument("--wide", action="store_true", help="also the update time and the command that continues each run")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from reins.policies.assistant.retention import check_prune_days

    if not 1 <= args.limit <= 1000:
        raise UserError("--limit must be between 1 and 1000")
    if args.prune is not None:
        try:
            check_prune_days(args.prune)
        except ValueError as error:
            raise UserError(str(error)) from None
    settings = Settings.from_env()
    from reins.runtime.persistence.checkpoint import checkpointer_from_settings
    from reins.runtime.persistence.runs import prune_runs, recent_runs

    durable = settings.checkpoint != "memory"
    with checkpointer_from_settings(settings, create=False) as saver:  # reading creates no file
        if args.prune is not None:
            pruned = prune_runs(saver, args.prune)
            if args.json:
                print_json({"pruned": pruned, "days": args.prune, "checkpointer": settings.checkpoint})
            else:
                print(f"pruned {len(pruned)} thread(s) idle for more than {args.prune:g} day(s)")
            return EXIT_OK
        runs = recent_runs(saver, args.limit, durable=durable)
    if args.json:
        print_json({"runs": [r.as_dict() for r in runs], "checkpointer": settings.checkpoint})
        return EXIT_OK
    if not runs:
        note = " (REINS_CHECKPOINT=memory keeps nothing between commands)" if not durable else ""
        print(f"no runs{note}")
        return EXIT_OK
    if args.wide:
        _wide(runs)
        return EXIT_OK
    now = datetime.now(timezone.utc)
    rows = [(_cut(redact(r.thread_id, 128), THREAD_CHARS), r.graph, _cut(redact(r.status, 32), STATUS_CHARS),
             age(r.updated_at, now)) for r in runs]
    table(("thread", "graph", "status", "age"), rows, [r.status for r in runs])
    if any(r.resume for r in runs):
        write("reins runs --wide: the command that continues each run")
    return EXIT_OK


def _wide(runs: list) -> None:
    """A line per run (its id whole, the update time), and under it the command that continues it
    on a line of its own, so no column is cut or dropped at 80 columns and the command copies whole."""
    headers = ("thread", "graph", "status", "updated (UTC)")
    rows = [(redact(r.thread_id, 128), r.graph, redact(r.status, 32), r.updated_at[:16].replace("T", " "))
            for r in runs]
    widths = [max(len(header), *(len(row[i]) for row in rows)) for i, header in enumerate(headers)]
    lines, statuses = [_joined(headers, widths)], [""]
    for run, row in zip(runs, rows):
        lines.append(_joined(row, widths))
        statuses.append(run.status)
        if run.resume:
            lines.append(f"  {redact(run.resume, 400)}")
            statuses.append("")
    write_lines(lines, statuses)


def _joined(cells: tuple[str, ...], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()


# The one-line form fits 80 columns: the longest graph name (14) and age (7) leave these two.
THREAD_CHARS, STATUS_CHARS = 32, 20


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def age(updated_at: str, now: datetime) -> str:
    """How long ago a run was last updated, in the largest whole unit: ``now``, ``12m``, ``3h``, ``5d``."""
    try:
        when = datetime.fromisoformat(updated_at)
    except ValueError:
        return "-"
    when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    seconds = max(0, int((now - when).total_seconds()))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "now"
