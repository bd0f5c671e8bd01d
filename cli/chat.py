"""``reins chat``: talk to the assistant (interactive), or ``reins chat --once "<message>"``.

Tool steps show as live progress on stderr; the answer goes to stdout. Conversations are
checkpointed (``--thread`` continues one); long-term notes persist in ``.reins/memory.db`` when the
checkpointer is sqlite (the CLI default), in PostgreSQL with ``REINS_CHECKPOINT=postgres``.
``--memory-scope user`` recalls the user's shared notes (what "remember that …" keeps) in any thread;
``--memory`` lists them.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Mapping
from typing import Any, TextIO

from policies.redaction import redact, redact_mapping
from policies.retention import durability_for
from cli.errors import EXIT_BAD_INPUT, EXIT_BLOCKED, EXIT_FAILED, EXIT_NEEDS_ATTENTION, EXIT_OK, UserError
from cli.render import ProgressView, colour, print_json, stream_run
from runtime.settings import Settings
MAX_MESSAGE_CHARS = 20_000
EXIT_WORDS = frozenset({"exit", "quit", ":q", "/exit", "/quit"})
_BAD_INPUT_STATUSES = frozenset({"unknown_command", "bad_input"})


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "chat", help="chat with the assistant (calculator, clock, http_get, read_doc, skills, remember/forget; "
        "/help for pipeline commands)"
    )
    parser.add_argument("--once", metavar="MESSAGE", help="send one message, print the answer and exit")
    parser.add_argument("--thread", help="continue this conversation thread (default: a new thread)")
    parser.add_argument("--user", default="local", help="whose long-term notes to read and write (default: local)")
    parser.add_argument("--memory-scope", choices=("thread", "user"), default="thread",
                        help="which notes a turn recalls: this thread's (default) or the user's shared ones "
                        "(what 'remember' keeps)")
    parser.add_argument("--memory", action="store_true", help="list the user's long-term notes and exit")
    parser.add_argument("--json", action="store_true", help="machine-readable output (with --once or --memory)")
    parser.set_defaults(handler=run)


def exit_code_for(values: Mapping[str, Any]) -> int:
    """Exit code of one answered message: slash-command problems are bad input, pipeline blocks are
    blocked, otherwise the verdict decides (success 0, partial 1, failure 4)."""
    pipeline = values.get("pipeline") or {}
    if pipeline.get("status") in _BAD_INPUT_STATUSES:
        return EXIT_BAD_INPUT
    if pipeline.get("status") in ("blocked", "stopped"):
        return EXIT_BLOCKED
    verdict = (values.get("answer") or {}).get("verdict")
    return {"success": EXIT_OK, "partial": EXIT_NEEDS_ATTENTION}.get(verdict, EXIT_FAILED)


def _check_message(message: str) -> str:
    text = (message or "").strip()
    if not text:
        raise UserError("the message is empty; type a question or /help")
    if len(text) > MAX_MESSAGE_CHARS:
        raise UserError(f"the message is longer than {MAX_MESSAGE_CHARS} characters")
    return text


def _send(graph: Any, message: str, thread: str, user: str, view: ProgressView | None = None,
          scope: str = "thread") -> dict[str, Any]:
    from langchain_core.messages import HumanMessage

    outcome = stream_run(
        graph,
        {"messages": [HumanMessage(content=message)]},
        config={"configurable": {"thread_id": thread}},
        context={"user_id": user, "memory_scope": scope},
        view=view,
        # The CLI never asks for human review, so no turn pauses: one checkpoint per turn.
        durability=durability_for(can_pause=False),
    )
    return outcome.values


def _print_answer(values: Mapping[str, Any], out: TextIO) -> None:
    answer = values.get("answer") or {}
    verdict = answer.get("verdict", "failure")
    out.write(redact(values.get("reply", ""), 4000) + "\n")
    for item in answer.get("evidence", []):
        out.write(f"  · {redact(item, 300)}\n")
    status = {"success": "completed", "partial": "needs_review", "failure": "failed"}.get(verdict, "failed")
    out.write(colour(f"[{verdict}]", status, out) + "\n")


def _payload(values: Mapping[str, Any], thread: str) -> dict[str, Any]:
    return {
        "thread": thread,
        "reply": values.get("reply", ""),
        "answer": values.get("answer"),
        "intent": values.get("intent"),
        "stop_reason": values.get("stop_reason"),
        "pipeline": values.get("pipeline"),
        "records": redact_mapping(values.get("records", []), 4000),  # arguments are the user's raw input
        "trace": values.get("trace", []),
    }


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    from graphs.assistant import build_graph  # the CLI is the application's entry point
    from runtime.checkpoint import checkpointer_from_settings
    from runtime.memory_store import open_store

    thread = args.thread or f"chat-{uuid.uuid4().hex[:12]}"
    user = (args.user or "local").strip() or "local"
    scope = getattr(args, "memory_scope", "thread")
    if getattr(args, "memory", False):
        if args.once is not None:
            raise UserError("--memory lists the notes; it does not take --once")
        with open_store(settings) as opened:
            return _list_notes(opened.store, user, args.thread, args.json)
    with checkpointer_from_settings(settings) as checkpointer, open_store(settings) as opened:
        graph = build_graph(checkpointer=checkpointer, store=opened.store)
        if args.once is not None:
            values = _send(graph, _check_message(args.once), thread, user, scope=scope)
            if args.json:
                print_json(_payload(values, thread))
            else:
                _print_answer(values, sys.stdout)
            return exit_code_for(values)
        if args.json:
            raise UserError("--json needs --once")
        return _interactive(graph, thread, user, scope)


def _list_notes(store: Any, user: str, thread: str | None, as_json: bool) -> int:
    """The user's notes: the shared ones (what ``remember`` keeps), and a thread's when named."""
    from policies.memory import notes_namespace, user_namespace

    areas = [("user", user_namespace(user))]
    if thread:
        areas.append(("thread", notes_namespace(user, "thread", thread)))
    notes = [
        {"scope": scope, "key": item.key, "kind": item.value.get("kind", "reflection"),
         "created_at": item.value.get("created_at", ""), "text": redact(str(item.value.get("text", "")), 600)}
        for scope, namespace in areas
        for item in sorted(store.search(namespace, limit=1000), key=lambda i: i.created_at)
    ]
    if as_json:
        print_json({"user": user, "notes": notes})
        return EXIT_OK
    if not notes:
        sys.stdout.write(f"No long-term notes for user {redact(user, 80)}.\n")
    for note in notes:
        sys.stdout.write(f"- [{note['scope']}, {note['kind']}, {note['created_at']}] {note['text']}\n")
    return EXIT_OK


def _interactive(graph: Any, thread: str, user: str, scope: str = "thread") -> int:
    sys.stderr.write(f"Reins assistant — thread {thread}. Type /help for commands, 'exit' to leave.\n")
    while True:
        try:
            line = input("you> ")
        except EOFError:
            sys.stdout.write("\n")
            return EXIT_OK
        text = line.strip()
        if not text:
            continue
        if text.lower() in EXIT_WORDS:
            return EXIT_OK
        try:
            message = _check_message(text)
        except UserError as error:
            sys.stderr.write(f"reins: {error}\n")
            continue
        try:
            values = _send(graph, message, thread, user, scope=scope)
        except Exception as error:  # one failed message does not end the session
            sys.stderr.write(f"reins: failed: {redact(f'{type(error).__name__}: {error}', 300)}\n")
            continue
        sys.stdout.write("assistant> ")
        _print_answer(values, sys.stdout)
