"""``reins replay``: recorded delivery runs re-decided by the current delegation policy (or one changed
with ``--set``), without calling any model: the first decision that flips per run, the status that
changes, and where a flipped decision would need a new model call."""

from __future__ import annotations

import argparse
import dataclasses

from cli.errors import EXIT_FAILED, EXIT_OK, UserError
from cli.render import print_json
from policies.redaction import redact
from runtime.settings import Settings

GRAPH = "delivery_chain"


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("replay", help="re-decide recorded delivery runs with the current (or a changed) "
                                                "policy, without calling a model")
    parser.add_argument("threads", nargs="*", help="thread ids (see reins runs)")
    parser.add_argument("--all", action="store_true", help="every recorded delivery run")
    parser.add_argument("--set", action="append", default=[], metavar="RULE=VALUE",
                        help="change a delegation rule for the replay, e.g. --set max_manager_reasks=0 "
                             "--set max_tool_calls=4 --set require_tasks_before_review=false")
    parser.add_argument("--json", action="store_true", help="machine-readable output (for CI)")
    parser.set_defaults(handler=run)


def policy_with(changes: list[str]):
    """The default delegation policy with ``RULE=VALUE`` changes (numbers and true/false)."""
    from policies.delegation import DEFAULT_POLICY

    fields = {f.name: f for f in dataclasses.fields(DEFAULT_POLICY) if f.type in ("int", "bool", int, bool)}
    updates: dict[str, object] = {}
    for change in changes:
        name, _, text = change.partition("=")
        name, text = name.strip(), text.strip().lower()
        if name not in fields:
            raise UserError(f"--set {redact(name, 60)}: not a delegation rule; one of {', '.join(sorted(fields))}")
        if fields[name].type in ("bool", bool):
            if text not in ("true", "false"):
                raise UserError(f"--set {name}: true or false")
            updates[name] = text == "true"
        else:
            if not text.isdigit():
                raise UserError(f"--set {name}: a whole number, 0 or more")
            updates[name] = int(text)
    return dataclasses.replace(DEFAULT_POLICY, **updates)


def run(args: argparse.Namespace) -> int:
    if not args.threads and not args.all:
        raise UserError("name the runs to replay (thread ids) or give --all")
    policy = policy_with(args.set)
    from graphs.delivery_chain import build_graph
    from runtime.checkpoint import checkpointer_from_settings
    from nodes.delivery.replay import replay_delivery
    from runtime.runs import recent_runs

    with checkpointer_from_settings(Settings.from_env()) as saver:
        graph = build_graph(checkpointer=saver)
        threads = list(args.threads) or [r.thread_id for r in recent_runs(saver, 1000) if r.graph == GRAPH]
        replays = []
        for thread in threads:
            if not graph.get_state({"configurable": {"thread_id": thread}}).values:
                raise UserError(f"no delivery run with thread id {redact(thread, 80)}")
            replays.append(replay_delivery(graph, thread, policy=policy))
    flips = [r for r in replays if r.first_flip]
    if args.json:
        print_json({"runs": [r.as_dict() for r in replays], "flipped": len(flips)})
        return EXIT_FAILED if flips else EXIT_OK
    for replay in replays:
        flip = replay.first_flip
        if flip is None:
            print(f"{replay.thread_id}: {len(replay.decisions)} decision(s), none flips (status {replay.recorded_status})")
            continue
        status = replay.replayed_status or "unknown without a new model call"
        print(f"{replay.thread_id}: flips at {flip.kind} (turn {flip.step}): {flip.recorded} → {flip.replayed}; "
              f"status {replay.recorded_status} → {status}; {replay.stopped}")
    print(f"{len(replays)} run(s) replayed, {len(flips)} with a flipped decision")
    return EXIT_FAILED if flips else EXIT_OK
