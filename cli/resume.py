"""``reins resume <thread-id> [--decision '<json>']``: continue a paused or interrupted tasklist run,
or answer the assistant's pause (a tool call waiting for approval, a question from ``ask_user``).

A run paused at a review waits for a decision: it is checked against the pending review's allowed
decisions before anything runs, and a refused decision leaves the run paused exactly as it was. A
run that was killed mid-way (its decision already recorded, or an unreviewed run) needs none: it
continues from its last checkpoint, without re-running the steps that had completed. Works from
any process: the run is read from the configured checkpointer (SQLite by default).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from reins.policies.assistant.retention import durability_for, graph_of
from reins.cli.errors import EXIT_BAD_INPUT, UserError
from reins.cli.model_config import check_models_unchanged, stamped
from reins.cli.render import ProgressView, stream_run
from reins.cli.tasklist import GRAPH_NAME, _graph, drive
from reins.runtime.config.settings import Settings
from reins.runtime.config.tracing import run_config

MAX_DECISION_CHARS = 200_000


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("resume", help="resume a paused or interrupted tasklist run, or answer a paused chat turn")
    parser.add_argument("thread_id", help="the thread id a paused run printed")
    parser.add_argument("--decision", help='JSON, e.g. \'{"type": "approve"}\' (needed when the run waits for a review); '
                        "- reads it from standard input")
    parser.add_argument("--review", action="store_true", help="answer any further review in the terminal")
    parser.add_argument("--user", help="a chat turn goes on as the user who started it; if given, it must be that user")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.add_argument("--allow-model-change", action="store_true",
                        help="finish the run on the current models even if it started on others")
    parser.add_argument("--keep-history", action="store_true", help="keep every checkpoint of the run (default: the latest)")
    parser.set_defaults(handler=run)


def read_decision(raw: str) -> object:
    """The ``--decision`` JSON, within the JSON limits; one line naming the field otherwise."""
    from reins.policies.text.json_limits import JsonLimitError, parse_json

    try:
        return parse_json(raw, max_chars=MAX_DECISION_CHARS)
    except (ValueError, JsonLimitError) as error:
        reason = f" ({error})" if isinstance(error, JsonLimitError) else ""
        raise UserError(f'--decision must be JSON, e.g. \'{{"type": "approve"}}\'{reason}') from None


def run(args: argparse.Namespace) -> int:
    raw = sys.stdin.read(MAX_DECISION_CHARS + 1) if args.decision == "-" else args.decision
    decision = None if raw is None else read_decision(raw)  # a bad decision is said before anything loads
    from reins.graphs.tasklist_agent import ResumeError, resume_command
    from reins.cli.chat import resume_assistant
    from reins.runtime.persistence.checkpoint import checkpointer_from_settings
    from reins.runtime.persistence.runs import keep_latest_checkpoints

    settings = Settings.from_env()
    with checkpointer_from_settings(settings, create=False) as saver:  # an unknown thread creates no file
        if saver.get_tuple({"configurable": {"thread_id": args.thread_id, "checkpoint_ns": ""}}) is None:
            # Refused before anything else is opened or written (the memory store included).
            raise UserError("resume refused: no run is stored under this thread id", EXIT_BAD_INPUT)
        answered = resume_assistant(saver, settings, args.thread_id, decision, as_json=args.json, user=args.user)
        if answered is not None:
            return answered
        graph = _graph(saver, review=False)
        config = stamped(run_config(GRAPH_NAME, thread_id=args.thread_id), settings)
        snapshot = graph.get_state(config)
        if snapshot.values and graph_of(args.thread_id, (snapshot.metadata or {}).get("reins_graph")) != GRAPH_NAME:
            raise UserError(f"resume refused: {_what_thread(saver, args.thread_id, snapshot.metadata)}")
        if snapshot.values:
            check_models_unchanged(snapshot.metadata, settings, args.allow_model_change)
        if snapshot.values and snapshot.next and not snapshot.interrupts:
            # Killed between steps (after a recorded decision, or never paused): continue where it stopped.
            if decision is not None:
                print("reins: the run is not waiting for a decision; continuing it from its last checkpoint", file=sys.stderr)
            command = None
        elif decision is None and snapshot.interrupts:
            raise UserError('the run waits for a review decision: add --decision \'{"type": "approve"}\' (or edit, reject)')
        else:
            try:
                command = resume_command(graph, config, decision)
            except ResumeError as error:
                raise UserError(f"resume refused: {error}", EXIT_BAD_INPUT) from None
        outcome = stream_run(graph, command, config, view=ProgressView(), durability=durability_for(can_pause=True))
        code = drive(graph, config, args.thread_id, outcome, interactive=args.review, as_json=args.json)
        if not args.keep_history:
            keep_latest_checkpoints(saver, args.thread_id)
        return code


def _what_thread(saver: Any, thread: str, metadata: Any) -> str:
    """Why a thread that is not a tasklist run cannot be resumed here, saying what it is."""
    checkpoint = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    channels = (checkpoint.checkpoint.get("channel_values") or {}) if checkpoint else {}
    if "messages" in channels or graph_of(thread, (metadata or {}).get("reins_graph")) == "assistant":
        return (f"thread {thread} is a chat conversation with no question or approval waiting; "
                f"continue it with reins chat --thread {thread}")
    return "that thread is not a tasklist run (a delivery run resumes with reins deliver --resume)"
