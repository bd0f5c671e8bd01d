"""``reins replay <thread>… | --all | --eval [PATH] [--set RULE=VALUE]… [--json]``: recorded runs
re-decided by the current policy (or one changed with ``--set``), without calling any model.

Checkpointed threads of all three graphs — delivery runs (manager turns, re-asks, review status,
revision targets, contract acceptance), tasklist runs (the machine's guard on every step, contract
acceptance) and assistant threads (each tool call's execution, turn by turn) — and the evaluation's
records (``records.json`` of ``reins eval``). Per run: the
first decision that flips, the status that changes, and where a flipped decision would need a new
model call; then the figures: runs replayed, decisions re-decided, runs that flip, status changes.
Exit 4 when anything flips (for CI)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reins.cli.errors import EXIT_FAILED, EXIT_OK, UserError
from reins.cli.render import print_json
from reins.policies.text.redaction import redact
from reins.runtime.config.settings import Settings

REPLAYED_GRAPHS = ("delivery_chain", "tasklist_agent", "assistant")
ALL_RUNS = 1000


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("replay", help="re-decide recorded runs with the current (or a changed) "
                                                "policy, without calling a model")
    parser.add_argument("threads", nargs="*", help="thread ids (see reins runs)")
    parser.add_argument("--all", action="store_true", help="every recorded run (delivery, tasklist, assistant)")
    parser.add_argument("--eval", nargs="?", const="", default=None, type=str, metavar="PATH",
                        help="the evaluation's records: a records.json or its directory (default: the last "
                             "reins eval's, eval/ in REINS_HOME)")
    parser.add_argument("--set", action="append", default=[], metavar="RULE=VALUE",
                        help="change a rule for the replay, e.g. --set max_manager_reasks=0, "
                             "--set require_tasks_before_review=false, --set reviewers.drop=boundary, "
                             "--set reviewers.risk.low=concern, --set tasklist.max_draft_revisions=0, "
                             "--set tools.trust=files__delete_file, --set contract.delivery.tasks.tasks=12 "
                             "(see docs/auditing.md)")
    parser.add_argument("--flips-only", action="store_true", help="list only the runs whose decisions flip")
    parser.add_argument("--json", action="store_true", help="machine-readable output (for CI)")
    parser.set_defaults(handler=run)


def overrides_of(changes: list[str]):
    from reins.policies.audit.replay import OverrideError, parse_overrides

    try:
        return parse_overrides(changes)
    except OverrideError as error:
        raise UserError(str(error)) from None


def _eval_path(text: str) -> Path:
    if text:
        return Path(text)
    from reins.cli.eval import EVAL_DIR
    from reins.runtime.persistence.home import reins_home

    return reins_home() / EVAL_DIR  # only read: the home is not created for it


def eval_replays(text: str, overrides: Any) -> list[Any]:
    path = _eval_path(text)
    if not path.exists():  # said before the evaluation's modules (LangGraph, LangChain) load
        raise UserError(redact(f"no records.json at {path} (run reins eval first)", 200))
    from reins.evals.records import load_records, replay_records

    try:
        records = load_records(path)
    except ValueError as error:
        raise UserError(redact(str(error), 200)) from None
    return replay_records(records, overrides)


def thread_replays(threads: list[str], overrides: Any) -> list[Any]:
    """The named threads (or, with none named, every recorded run of a replayed graph), re-decided."""
    from reins.nodes.replay import replay_thread
    from reins.runtime.persistence.checkpoint import checkpointer_from_settings
    from reins.runtime.persistence.runs import recent_runs, summarise

    replays = []
    with checkpointer_from_settings(Settings.from_env(), create=False) as saver:
        summaries = ([summarise(saver, thread) for thread in threads] if threads
                     else [r for r in recent_runs(saver, ALL_RUNS) if r.graph in REPLAYED_GRAPHS])
        for thread, summary in zip(threads or [s.thread_id for s in summaries], summaries):
            if summary is None or summary.graph not in REPLAYED_GRAPHS:
                raise UserError(f"no delivery, tasklist or assistant run with thread id {redact(thread, 80)}")
            item = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            values = item.checkpoint.get("channel_values") or {}
            replays.append(replay_thread(summary.graph, values, thread, summary.status, overrides))
    return replays


def run(args: argparse.Namespace) -> int:
    if not args.threads and not args.all and args.eval is None:
        raise UserError("name the runs to replay (thread ids), or give --all or --eval")
    if args.threads and args.all:
        raise UserError("give thread ids or --all, not both")
    overrides = overrides_of(args.set)
    from reins.policies.audit.replay import figures

    replays = []
    if args.eval is not None:
        replays += eval_replays(args.eval, overrides)
    if args.threads or args.all:
        replays += thread_replays(list(args.threads), overrides)
    counts = figures(replays)
    if args.json:
        print_json({"runs": [r.as_dict() for r in replays], **{k: v for k, v in counts.items() if k != "runs"},
                    "replayed": counts["runs"]})
        return EXIT_FAILED if counts["flipped"] else EXIT_OK
    for replay in replays:
        flip = replay.first_flip
        if flip is None:
            if args.flips_only:
                continue
            print(f"{replay.thread_id}: {len(replay.decisions)} decision(s), none flips (status {replay.recorded_status})")
            continue
        status = f"{replay.recorded_status} → {replay.replayed_status or 'unknown without a new model call'}"
        if replay.replayed_status == replay.recorded_status:
            status = f"{replay.recorded_status} (unchanged)"
        where = f"turn {flip.step}" if flip.kind in ("delegation", "reask") else f"#{flip.step}"
        if flip.chat_turn is not None:  # an assistant thread: the conversation turn and the call in it
            where = f"turn {flip.chat_turn}" + (f", call {flip.step}" if flip.kind.startswith("tool:") else "")
        print(f"{replay.thread_id}: flips at {flip.kind} ({where}): {flip.recorded} → {flip.replayed}; "
              f"status {status}; {replay.stopped}")
    print(f"{counts['runs']} run(s) replayed, {counts['decisions']} decision(s) re-decided, "
          f"{counts['flipped']} with a flipped decision: {counts['status_changes']} status change(s), "
          f"{counts['needs_model']} would need a new model call")
    return EXIT_FAILED if counts["flipped"] else EXIT_OK
