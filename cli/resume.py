"""``reins resume <thread-id> --decision '<json>'``: answer the review a paused tasklist run waits for,
or the assistant's pause (a tool call waiting for approval, a question from ``ask_user``).

The decision is checked against the pending review's allowed decisions before anything runs; a
refused decision leaves the run paused exactly as it was. Works from any process: the run is read
from the configured checkpointer (SQLite by default).
"""

from __future__ import annotations

import argparse
import json

from policies.retention import durability_for
from cli.chat import resume_assistant
from cli.errors import EXIT_BAD_INPUT, UserError
from cli.render import ProgressView, stream_run
from cli.tasklist import GRAPH_NAME, _graph, drive
from runtime.settings import Settings
from runtime.tracing import run_config


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("resume", help="resume a paused run with a review decision")
    parser.add_argument("thread_id", help="the thread id a paused run printed")
    parser.add_argument("--decision", required=True, help='JSON, e.g. \'{"type": "approve"}\'')
    parser.add_argument("--review", action="store_true", help="answer any further review in the terminal")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from graphs.tasklist_agent import ResumeError, resume_command
    from runtime.checkpoint import checkpointer_from_settings

    try:
        decision = json.loads(args.decision)
    except ValueError:
        raise UserError('--decision must be JSON, e.g. \'{"type": "approve"}\'') from None
    settings = Settings.from_env()
    with checkpointer_from_settings(settings) as saver:
        answered = resume_assistant(saver, settings, args.thread_id, decision, as_json=args.json)
        if answered is not None:
            return answered
        graph = _graph(saver, review=False)
        config = run_config(GRAPH_NAME, thread_id=args.thread_id)
        try:
            command = resume_command(graph, config, decision)
        except ResumeError as error:
            raise UserError(f"resume refused: {error}", EXIT_BAD_INPUT) from None
        outcome = stream_run(graph, command, config, view=ProgressView(), durability=durability_for(can_pause=True))
        return drive(graph, config, args.thread_id, outcome, interactive=args.review, as_json=args.json)
