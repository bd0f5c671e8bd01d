"""``reins deliver "<requirement>" | FILE | - | --file PATH | --scenario <id> [--json]``: the delivery
chain from the terminal (a requirement as text, from a file or from standard input).

``reins deliver --resume <thread>`` finishes a run that was interrupted (e.g. the process died
mid-review) from its checkpoint, without re-running the stages that had completed.

Live progress goes to stderr; the deterministic report (or, with ``--json``, the public outputs) to
stdout. The exit code follows the run status through ``reins.cli.errors.EXIT_FOR_OUTCOME``: 0 pass; 1 needs
attention (needs_review, needs_changes, clarification_required); 3 blocked; 4 failed; 2 bad input.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from typing import Any

from reins.policies.text.redaction import redact
from reins.policies.assistant.retention import durability_for, graph_of
from reins.policies.text.terminal_text import printable
from reins.cli.errors import EXIT_OK, UserError, exit_code
from reins.cli.inputs import text_argument
from reins.cli.model_config import check_models_unchanged, stamped
from reins.cli.render import ProgressView, colour, print_json, stream_run, write
from reins.runtime.config.paths import RESOURCES
from reins.runtime.config.settings import Settings
from reins.runtime.config.tracing import new_run_id, run_config

GRAPH_NAME = "delivery_chain"
PUBLIC_KEYS = (
    "run_status", "report", "artifacts", "review_bundle", "post_review_decision", "revision",
    "policy_violation", "failure", "metrics", "trace",
)
# Each run status as an outcome of cli.errors.EXIT_FOR_OUTCOME.
OUTCOMES: Mapping[str, str] = {
    "pass": "pass",
    "needs_review": "needs_attention",
    "needs_changes": "needs_attention",
    "clarification_required": "needs_attention",
    "blocked": "blocked",
    "failed": "failed",
}
_SCENARIO_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "deliver", help="requirement → plan, tasks, three parallel reviews, at most one revision, a report"
    )
    parser.add_argument("requirement", nargs="*",
                        help="the requirement text (quote it), a file holding it, or - for standard input")
    parser.add_argument("--file", metavar="PATH", help="read the requirement from PATH (- for standard input)")
    parser.add_argument("--scenario", metavar="ID", help="a bundled scenario (see --list)")
    parser.add_argument("--list", action="store_true", help="list the bundled scenarios and exit")
    parser.add_argument("--resume", metavar="THREAD", help="finish an interrupted run from its checkpoint")
    parser.add_argument("--allow-model-change", action="store_true",
                        help="with --resume: finish the run on the current models even if it started on others")
    parser.add_argument("--polish", action="store_true", help="let the polish model reword the summary")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.add_argument("--keep-history", action="store_true", help="keep every checkpoint of the run (default: the latest)")
    parser.set_defaults(handler=run)


def scenario_ids() -> list[str]:
    root = RESOURCES / "scenarios"
    return sorted(p.name for p in root.iterdir() if (p / "requirement.md").is_file()) if root.is_dir() else []


def exit_code_for(values: Mapping[str, Any]) -> int:
    if (values.get("failure") or {}).get("stage") == "load":
        return exit_code("bad_input")  # refused before any model call
    return exit_code(OUTCOMES.get(str(values.get("run_status")), "failed"))


def payload_for(args: argparse.Namespace) -> dict[str, str]:
    if args.scenario and (args.requirement or args.file):
        raise UserError("give either a requirement or --scenario, not both")
    text = text_argument(args.requirement, args.file, "requirement")
    if args.scenario and text:
        raise UserError("give either a requirement or --scenario, not both")
    if args.scenario:
        if not _SCENARIO_ID.match(args.scenario):
            raise UserError("a scenario id is lower-case letters, digits, '-' or '_'; see `reins deliver --list`")
        if args.scenario not in scenario_ids():
            raise UserError(f"unknown scenario {args.scenario!r}; available: {', '.join(scenario_ids())}")
        return {"requirement_uri": f"demo://scenarios/{args.scenario}/requirement.md"}
    if not text:
        raise UserError('give a requirement: reins deliver "<requirement>" or reins deliver --scenario <id>')
    return {"requirement": text}


def resume_check(args: argparse.Namespace) -> None:
    if args.requirement or args.scenario or args.file:
        raise UserError("--resume continues an existing run; give no requirement or scenario with it")
    if not re.match(r"^[A-Za-z0-9_.:-]{1,128}$", args.resume):
        raise UserError("that is not a thread id")
    return None


def _graph(saver: Any) -> Any:
    # The CLI is the application edge: it sits above the graphs and wires one to the runtime.
    from reins.graphs.delivery_chain import build_graph
    from reins.cli.doctor_audit import refuse_over_caps

    refuse_over_caps("delivery_chain")
    return build_graph(checkpointer=saver)


def run(args: argparse.Namespace) -> int:
    if args.list:
        for scenario in scenario_ids():
            print(scenario)
        return EXIT_OK
    payload = resume_check(args) if args.resume else payload_for(args)
    settings = Settings.from_env()
    from reins.runtime.persistence.checkpoint import checkpointer_from_settings
    from reins.runtime.persistence.runs import keep_latest_checkpoints

    from reins.cli.doctor_audit import run_caps

    thread_id = args.resume or f"deliver-{new_run_id()}"
    with checkpointer_from_settings(settings) as saver:
        graph = _graph(saver)
        config = stamped(run_config(GRAPH_NAME, thread_id=thread_id), settings)
        if args.resume:
            snapshot = graph.get_state(config)
            if not snapshot.values:
                raise UserError("no delivery run with that thread id in the configured checkpointer")
            if graph_of(thread_id, (snapshot.metadata or {}).get("reins_graph")) != GRAPH_NAME:
                raise UserError("--resume: that thread is not a delivery run (a tasklist run resumes with reins resume)")
            if not snapshot.next:  # already finished: show it again
                show(snapshot.values, thread_id, args.json)
                return exit_code_for(snapshot.values)
            check_models_unchanged(snapshot.metadata, settings, args.allow_model_change)
        context = {"polish": True} if args.polish else None
        # Resuming passes no input: completed stages are read from the checkpoint, never re-run.
        # Saved after every step, so a hard kill loses at most the step in flight.
        with run_caps():  # every request checked against the user's caps before it is made
            outcome = stream_run(graph, payload, config, context=context, view=ProgressView(),
                                 durability=durability_for(can_pause=False))
        if not args.keep_history:
            keep_latest_checkpoints(saver, thread_id)
    values = outcome.values
    show(values, thread_id, args.json)
    return exit_code_for(values)


def show(values: Mapping[str, Any], thread_id: str, as_json: bool) -> None:
    public = {key: values.get(key) for key in PUBLIC_KEYS}
    if as_json:
        print_json({"thread_id": thread_id, **public})
        return
    status = str(values.get("run_status") or "failed")
    failure = values.get("failure") or {}
    if failure.get("stage") == "load":  # bad input: one clear line, not an empty report
        print(f"reins: error: {redact(failure.get('message', 'the input was refused'), 300)}", file=sys.stderr)
        return
    write(printable(values.get("report") or ""), markdown=True)  # model-written: no escape sequences
    print("", file=sys.stderr)
    if status == "failed" and failure:  # why, in one line: the stage and the cause class (or the rule)
        why = failure.get("cause") or failure.get("code") or "unknown"
        print(f"reins: failed at {redact(str(failure.get('stage')), 80)}: {redact(str(why), 200)}", file=sys.stderr)
    budget = (values.get("metrics") or {}).get("budget")
    if budget:  # what the run used beside the most its configuration allows
        print(f"budget (used/worst case): {budget['line']}", file=sys.stderr)
    print(colour(f"status: {status}", status, sys.stderr) + f"  (thread {redact(thread_id, 80)})", file=sys.stderr)
