"""``reins chat``: talk to the assistant (interactive), or ``reins chat --once "<message>"``.

Tool steps show as live progress on stderr; the answer goes to stdout. Conversations are
checkpointed (``--thread`` continues one); long-term notes persist in ``.reins/memory.db`` when the
checkpointer is sqlite (the CLI default).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO

from policies.redaction import redact, redact_mapping
from policies.retention import durability_for
from cli.chat_pauses import ask_pause, check, describe, hint, pending
from cli.errors import EXIT_BAD_INPUT, EXIT_BLOCKED, EXIT_FAILED, EXIT_NEEDS_ATTENTION, EXIT_OK, EXIT_PAUSED, UserError
from cli.render import ProgressView, colour, print_json, stream_run
from runtime.paths import STATE_DIR
from runtime.settings import Settings

MEMORY_DB = STATE_DIR / "memory.db"
MAX_MESSAGE_CHARS = 20_000
EXIT_WORDS = frozenset({"exit", "quit", ":q", "/exit", "/quit"})
_BAD_INPUT_STATUSES = frozenset({"unknown_command", "bad_input"})


class _HelpWithTools(argparse.Action):
    """``reins chat --help``: the usual help, then the chat tools as their declarations describe
    them (built only when asked: loading the tools is slower than parsing arguments)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show this help and the tools")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from runtime.toolbox import chat_toolset

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
    parser.add_argument("--thread", help="continue this conversation thread (default: a new thread)")
    parser.add_argument("--user", default="local", help="whose long-term notes to read and write (default: local)")
    parser.add_argument("--json", action="store_true", help="machine-readable output (with --once)")
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


@contextmanager
def _memory_store(settings: Settings) -> Iterator[Any]:
    if settings.checkpoint != "sqlite":
        from langgraph.store.memory import InMemoryStore

        yield InMemoryStore()
        return
    from langgraph.store.sqlite import SqliteStore

    MEMORY_DB.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(MEMORY_DB), check_same_thread=False, isolation_level=None)
    try:
        store = SqliteStore(conn)
        store.setup()
        yield store
    finally:
        conn.close()


def _check_message(message: str) -> str:
    text = (message or "").strip()
    if not text:
        raise UserError("the message is empty; type a question or /help")
    if len(text) > MAX_MESSAGE_CHARS:
        raise UserError(f"the message is longer than {MAX_MESSAGE_CHARS} characters")
    return text


def _send(graph: Any, message: str | Any, thread: str, user: str, view: ProgressView | None = None) -> dict[str, Any]:
    """Send a message (or a ``Command`` resuming a pause) and return the thread's values."""
    from langchain_core.messages import HumanMessage

    outcome = stream_run(
        graph,
        {"messages": [HumanMessage(content=message)]} if isinstance(message, str) else message,
        config={"configurable": {"thread_id": thread}},
        context={"user_id": user},
        view=view,
        durability=durability_for(can_pause=True),  # a tool call may pause for approval
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

    thread = args.thread or f"chat-{uuid.uuid4().hex[:12]}"
    user = (args.user or "local").strip() or "local"
    with checkpointer_from_settings(settings) as checkpointer, _memory_store(settings) as store:
        graph = _build(build_graph, checkpointer, store)
        if args.once is not None:
            values = _send(graph, _check_message(args.once), thread, user)
            return _report_turn(graph, values, thread, as_json=args.json)
        if args.json:
            raise UserError("--json needs --once")
        return _interactive(graph, thread, user)


def _build(build_graph: Any, checkpointer: Any, store: Any) -> Any:
    from policies.mcp_config import McpConfigError

    from runtime.toolbox import chat_toolset

    try:
        chat_toolset()  # REINS_MCP_CONFIG checked (and its servers started) before the first message
    except McpConfigError as error:  # a broken file: bad configuration
        raise UserError(str(error)) from None
    return build_graph(checkpointer=checkpointer, store=store)


def answer_pauses(graph: Any, values: dict[str, Any], thread: str, user: str,
                  ask: Any = None) -> dict[str, Any] | None:
    """Ask every pause of the turn in the terminal and resume; None when input ends first."""
    from langgraph.types import Command

    from runtime.toolbox import chat_toolset

    while waiting := pending(graph, thread):
        decision = ask_pause(waiting[0], ask or input)
        if decision is None:
            return None
        problem = check(chat_toolset(), waiting[0], decision)
        if problem:
            sys.stderr.write(f"reins: {redact(problem, 300)}\n")
            continue
        values = _send(graph, Command(resume=decision), thread, user)
    return values


def resume_assistant(saver: Any, settings: Settings, thread: str, decision: Any, *, as_json: bool) -> int | None:
    """``reins resume`` for an assistant thread paused at a tool approval or a question; None when
    the thread has no such pause (then it is another graph's). A decision that does not fit is
    refused before anything runs: the call stays paused."""
    from langgraph.types import Command

    from graphs.assistant import build_graph
    from runtime.toolbox import chat_toolset

    with _memory_store(settings) as store:
        graph = _build(build_graph, saver, store)
        waiting = pending(graph, thread)
        if not waiting:
            return None
        problem = check(chat_toolset(), waiting[0], decision)
        if problem:
            raise UserError(f"resume refused: {problem}", EXIT_BAD_INPUT)
        values = _send(graph, Command(resume=decision), thread, "local")
        return _report_turn(graph, values, thread, as_json=as_json)


def _report_turn(graph: Any, values: dict[str, Any], thread: str, *, as_json: bool) -> int:
    """Print a turn that ran to its answer or to a pause (then how to resume); its exit code."""
    waiting = pending(graph, thread)
    if as_json:
        print_json({**_payload(values, thread), "pending": waiting})
    elif waiting:
        sys.stderr.write(f"{describe(waiting[0])}\n{hint(thread, waiting[0])}\n")
    else:
        _print_answer(values, sys.stdout)
    return EXIT_PAUSED if waiting else exit_code_for(values)


def _interactive(graph: Any, thread: str, user: str) -> int:
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
            values = _send(graph, message, thread, user)
            values = answer_pauses(graph, values, thread, user)
        except Exception as error:  # one failed message does not end the session
            sys.stderr.write(f"reins: failed: {redact(f'{type(error).__name__}: {error}', 300)}\n")
            continue
        if values is None:  # input ended while a call waited: it stays paused on the thread
            sys.stderr.write(f"reins: paused; resume with: reins resume {thread} --decision '<json>'\n")
            return EXIT_PAUSED
        sys.stdout.write("assistant> ")
        _print_answer(values, sys.stdout)
