"""``reins chat``: talk to the assistant (interactive), or ``reins chat --once "<message>"``.

Tool steps show as live progress on stderr; the answer goes to stdout. Conversations are
checkpointed (``--thread`` continues one); long-term notes persist in ``memory.db`` in the home for
runs (``REINS_HOME``) when the checkpointer is sqlite (the CLI default), in PostgreSQL with
``REINS_CHECKPOINT=postgres``. ``--memory-scope user`` recalls the user's shared notes (what
"remember that …" keeps) in any thread; ``--memory`` lists them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from reins.policies.assistant.memory import DEFAULT_SCOPE, SCOPES
from reins.policies.text.redaction import redact, redact_mapping
from reins.cli.chat_threads import chosen_thread
from reins.cli.chat_turns import (BUDGET_KEY, _build, checked_start, _check_message, _print_answer, _screen_for, _send, _stand_in_first,
                            answer_pauses, close_interrupted_turn, finish_interrupted_turn)
from reins.cli.chat_pauses import check, describe, hint, pending
from reins.cli.chat_screen import ChatScreen, declined
from reins.cli.errors import EXIT_BAD_INPUT, EXIT_BLOCKED, EXIT_FAILED, EXIT_NEEDS_ATTENTION, EXIT_OK, EXIT_PAUSED, UserError
from reins.cli.inputs import read_text
from reins.cli.model_config import fallbacks_of, models_of
from reins.cli.render import print_json
from reins.runtime.config.settings import Settings

__all__ = ["_send", "answer_pauses", "exit_code_for", "register", "resume_assistant"]  # _send: the tests drive a turn

_BAD_INPUT_STATUSES = frozenset({"unknown_command", "bad_input"})


class _HelpWithTools(argparse.Action):
    """``reins chat --help``: the usual help, then the chat tools as their declarations describe
    them (built only when asked: loading the tools is slower than parsing arguments)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show this help and the tools")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from reins.runtime.tools.toolbox import chat_toolset

        lines = "\n".join(f"  {line}" for line in chat_toolset().help_lines())
        parser.epilog = f"tools:\n{lines}\n\nCommands inside the chat: /help."
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.print_help()
        parser.exit()


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "chat", help="chat with the assistant and its tools (yours too, through MCP; /help inside)", add_help=False
    )
    parser.add_argument("-h", "--help", action=_HelpWithTools)
    parser.add_argument("--once", metavar="MESSAGE", help="send one message, print the answer and exit")
    parser.add_argument("--file", metavar="PATH", help="like --once, with the message read from PATH (- for standard input)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("-c", "--continue", dest="continue_latest", action="store_true",
                       help="continue the latest chat in this home")
    which.add_argument("--thread", help="continue this conversation thread (refused when there is none by that id)")
    which.add_argument("--new-thread", metavar="ID", help="start a new conversation with this id (default: a generated one)")
    parser.add_argument("--user", default="local", help="whose long-term notes to read and write (default: local)")
    parser.add_argument("--memory-scope", choices=SCOPES, default=DEFAULT_SCOPE,
                        help="which notes a turn recalls and keeps: the user's, shared by their sessions "
                        "(default), or this thread's only")
    parser.add_argument("--memory", action="store_true", help="list the user's long-term notes and exit")
    parser.add_argument("--json", action="store_true", help="machine-readable output (with --once or --memory)")
    parser.add_argument("--keep-history", action="store_true", help="keep every checkpoint of the thread (default: the latest)")
    parser.set_defaults(handler=run)


def exit_code_for(values: Mapping[str, Any]) -> int:
    """Exit code of one answered message: slash-command problems are bad input, pipeline blocks are
    blocked, a call the user declined is their decision (0), otherwise the verdict decides (success 0,
    partial 1, failure 4)."""
    pipeline = values.get("pipeline") or {}
    if pipeline.get("status") in _BAD_INPUT_STATUSES:
        return EXIT_BAD_INPUT
    if pipeline.get("status") in ("blocked", "stopped"):
        return EXIT_BLOCKED
    verdict = (values.get("answer") or {}).get("verdict")
    if verdict != "success" and declined(values.get("records")):
        return EXIT_OK  # not run because you declined it: your decision was carried out, nothing failed
    return {"success": EXIT_OK, "partial": EXIT_NEEDS_ATTENTION}.get(verdict, EXIT_FAILED)


def _finish_at_start(graph: Any, thread: str, user: str, out: TextIO | None, scope: str,
                     settings: Settings) -> None:
    """A turn killed mid-way (or cancelled before the last chat ended) is finished first, when its
    models are the current ones; a new message otherwise starts a new turn."""
    screen = _screen_for(out) if out is not None else None
    try:
        values = finish_interrupted_turn(graph, thread, user, scope, settings, screen)
        if values is not None and out is not None:
            _print_answer(values, out, screen)
    finally:
        if screen is not None:
            screen.stop()


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
        "models": models_of(values),
        "fallbacks": fallbacks_of(values),
        "metrics": _metrics(values),
        "budget": values.get(BUDGET_KEY),
    }


def _metrics(values: Mapping[str, Any]) -> dict[str, Any]:
    """The turn's model calls: totals (calls, repairs, retries, fallbacks, failed calls, tokens), the
    fallbacks per role, and the same per contract."""
    from reins.runtime.contracts import fallbacks_per_role, metrics_totals
    from reins.runtime.execution.steps import METRICS_KEY

    per_contract = values.get(METRICS_KEY) or {}
    return {**metrics_totals(per_contract), "fallbacks_per_role": fallbacks_per_role(per_contract),
            "per_contract": per_contract}


def run(args: argparse.Namespace) -> int:
    if args.file is not None:
        if args.once is not None:
            raise UserError("give either --once or --file, not both")
        args.once = read_text(args.file)
    settings = Settings.from_env()
    user = (args.user or "local").strip() or "local"
    message = None if args.once is None else _check_message(args.once)  # before anything is opened or written
    scope = args.memory_scope
    if args.memory and message is not None:
        raise UserError("--memory lists the notes; it does not take --once")
    if args.json and message is None and not args.memory:
        raise UserError("--json needs --once")
    if message is None and not args.memory and _starts_warm(args, settings):
        from reins.cli.chat_loop import interactive_warm

        return interactive_warm(settings, user, scope, args.keep_history)
    from reins.runtime.persistence.memory_store import open_store  # (after every argument is checked)

    if args.memory:
        with open_store(settings, create=False) as opened:  # listing creates no file
            return _list_notes(opened.store, user, args.thread, args.json)
    checked_start()  # before the checkpoint and memory files are opened (and created)
    from reins.graphs.assistant import build_graph  # the CLI is the application's entry point
    from reins.runtime.persistence.checkpoint import checkpointer_from_settings
    from reins.runtime.persistence.runs import keep_latest_checkpoints

    with checkpointer_from_settings(settings) as checkpointer, open_store(settings) as opened:
        thread, existed = chosen_thread(args, checkpointer, durable=settings.checkpoint != "memory")
        graph = _build(build_graph, checkpointer, opened.store)
        try:
            if existed:
                _finish_at_start(graph, thread, user, None if args.json else sys.stdout, scope, settings)
            if message is None:
                from reins.cli.chat_loop import interactive

                _stand_in_first(settings, sys.stdout)
                return interactive(lambda: graph, thread, user, settings, scope, existed)
            if not args.json:
                _stand_in_first(settings, sys.stdout)
            screen = None if args.json else _screen_for(sys.stdout)
            close_interrupted_turn(graph, thread)  # left open (other models): the message is a new turn
            try:
                values = _send(graph, message, thread, user, screen, scope, settings=settings)
                return _report_turn(graph, values, thread, as_json=args.json, screen=screen)
            finally:
                if screen is not None:
                    screen.stop()
        finally:
            if not args.keep_history:
                keep_latest_checkpoints(checkpointer, thread)


def _starts_warm(args: argparse.Namespace, settings: Settings) -> bool:
    """A new chat on a terminal with no MCP server shows its prompt at once and builds the assistant
    while the first message is typed. A named or continued thread is looked up first (a mistyped one
    is refused before the prompt), and MCP servers are started and their problems said before it."""
    from reins.cli.chat_input import on_a_terminal

    named = args.continue_latest or args.thread is not None or args.new_thread is not None
    return not named and not settings.mcp_config and on_a_terminal()


def resume_assistant(saver: Any, settings: Settings, thread: str, decision: Any, *, as_json: bool,
                     user: str | None = None) -> int | None:
    """``reins resume`` for an assistant thread paused at a tool approval or a question; None when
    the thread has no such pause (then it is another graph's). A decision that does not fit is
    refused before anything runs: the call stays paused. The turn goes on as the user it started
    with; ``user`` (``--user``), when given, must be that user."""
    from langgraph.types import Command

    from reins.graphs.assistant import build_graph
    from reins.runtime.persistence.memory_store import open_store
    from reins.runtime.tools.toolbox import chat_toolset
    from reins.runtime.execution.user_input import ResumeRefused

    with open_store(settings) as opened:
        graph = _build(build_graph, saver, opened.store)
        waiting = pending(graph, thread)
        if not waiting:
            return None
        if waiting[0].get("kind") == "running":  # decided already, being carried out: nothing to answer
            raise UserError(f"resume refused: {waiting[0].get('status')}", EXIT_BAD_INPUT)
        if decision is None:
            raise UserError(f"the thread waits for a decision. {describe(waiting[0])} {hint(thread, waiting[0])}")
        problem = check(chat_toolset(), waiting[0], decision)
        if problem:
            raise UserError(f"resume refused: {problem}", EXIT_BAD_INPUT)
        started = started_identity(graph, thread)
        if user is not None and user.strip() != started["user_id"]:
            raise UserError(f"resume refused: the turn was started by user {redact(started['user_id'], 80)}; "
                            "resume it as that user (or without --user)", EXIT_BAD_INPUT)
        try:
            values = _send(graph, Command(resume=decision), thread, started["user_id"], scope=started["memory_scope"])
        except ResumeRefused as error:  # another resume took the decision first: this one ran nothing
            raise UserError(str(error) if str(error).startswith("resume refused") else f"resume refused: {error}",
                            EXIT_BAD_INPUT) from None
        return _report_turn(graph, values, thread, as_json=as_json)


def started_identity(graph: Any, thread: str) -> Mapping[str, str]:
    """The user id and memory scope the thread's current turn started with."""
    from reins.nodes.assistant.identity import identity_of

    values = graph.get_state({"configurable": {"thread_id": thread}}).values or {}
    return values.get("identity") or identity_of(None)


def _report_turn(graph: Any, values: dict[str, Any], thread: str, *, as_json: bool,
                 screen: ChatScreen | None = None) -> int:
    """Print a turn that ran to its answer or to a pause (then how to resume); its exit code."""
    waiting = pending(graph, thread)
    if as_json:
        print_json({**_payload(values, thread), "pending": waiting})
    elif waiting:
        if screen is not None:
            screen.stop()
        sys.stderr.write(f"{describe(waiting[0])}\n{hint(thread, waiting[0])}\n")
    else:
        _print_answer(values, sys.stdout, screen)
    return EXIT_PAUSED if waiting else exit_code_for(values)


def _list_notes(store: Any, user: str, thread: str | None, as_json: bool) -> int:
    """The user's notes: the shared ones (what ``remember`` keeps), and a thread's when named."""
    from reins.policies.assistant.memory import notes_namespace, user_namespace

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
