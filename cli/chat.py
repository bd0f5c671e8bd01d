"""``reins chat``: talk to the assistant (interactive), or ``reins chat --once "<message>"``.

Tool steps show as live progress on stderr; the answer goes to stdout. Conversations are
checkpointed (``--thread`` continues one); long-term notes persist in ``memory.db`` in the home for
runs (``REINS_HOME``) when the checkpointer is sqlite (the CLI default), in PostgreSQL with
``REINS_CHECKPOINT=postgres``. ``--memory-scope user`` recalls the user's shared notes (what
"remember that …" keeps) in any thread; ``--memory`` lists them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import uuid
from collections.abc import Mapping
from typing import Any, TextIO

from policies.memory import SCOPES
from policies.model_notice import STAND_IN_NOTICE
from policies.redaction import redact, redact_mapping
from policies.retention import durability_for
from policies.terminal_text import printable
from cli.chat_pauses import ask_pause, check, describe, hint, pending
from cli.errors import EXIT_BAD_INPUT, EXIT_BLOCKED, EXIT_FAILED, EXIT_NEEDS_ATTENTION, EXIT_OK, EXIT_PAUSED, UserError
from cli.inputs import read_text
from cli.model_config import fallbacks_of, models_of
from cli.render import ProgressView, colour, print_json, stream_run, write
from runtime.contracts import safe_error
from runtime.settings import Settings

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
    parser.add_argument("--file", metavar="PATH", help="like --once, with the message read from PATH (- for standard input)")
    parser.add_argument("--thread", help="continue this conversation thread (default: a new thread)")
    parser.add_argument("--user", default="local", help="whose long-term notes to read and write (default: local)")
    parser.add_argument("--memory-scope", choices=SCOPES, default="thread",
                        help="which notes a turn recalls: this thread's (default) or the user's shared ones "
                        "(what 'remember' keeps)")
    parser.add_argument("--memory", action="store_true", help="list the user's long-term notes and exit")
    parser.add_argument("--json", action="store_true", help="machine-readable output (with --once or --memory)")
    parser.add_argument("--keep-history", action="store_true", help="keep every checkpoint of the thread (default: the latest)")
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


class StreamedReply:
    """The reply printed as it is written (a terminal only); ``finish`` replaces it with the checked
    reply when the check changed it, so what stays on screen is always the checked text."""

    def __init__(self, out: TextIO):
        self.out = out
        self.text = ""

    def __call__(self, piece: str) -> None:
        piece = printable(piece)  # model-written: no escape sequences reach the terminal
        if not self.text:
            self.out.write("assistant> ")
        self.text += piece
        self.out.write(piece)
        self.out.flush()

    def finish(self, checked: str) -> bool:
        """End the streamed text; True when it is the checked reply (nothing to print again)."""
        if not self.text:
            return False
        if self.text == checked:
            self.out.write("\n")
            return True
        width = max(shutil.get_terminal_size().columns, 20)
        rows = sum(max(1, -(-len(line) // width)) for line in f"assistant> {self.text}".split("\n"))
        self.out.write(f"\r\x1b[{rows - 1}A\x1b[J" if rows > 1 else "\r\x1b[J")  # erase the draft
        self.out.write("assistant> ")
        return False


def _send(graph: Any, message: str | Any | None, thread: str, user: str, view: ProgressView | None = None,
          streamed: StreamedReply | None = None, scope: str = "thread") -> dict[str, Any]:
    """Send a message (or a ``Command`` resuming a pause; None: finish the thread's interrupted turn
    from its checkpoint) and return the thread's values."""
    from langchain_core.messages import HumanMessage

    outcome = stream_run(
        graph,
        {"messages": [HumanMessage(content=message)]} if isinstance(message, str) else message,
        config={"configurable": {"thread_id": thread}},
        context={"user_id": user, "memory_scope": scope},
        view=view,
        durability=durability_for(can_pause=True),  # a tool call may pause for approval
        on_reply=streamed,
    )
    return outcome.values


def _finish_interrupted_turn(graph: Any, thread: str, user: str, out: TextIO | None) -> None:
    """A turn killed mid-way is finished first (its completed steps are not re-run), so the next
    message starts from a complete conversation."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    if not (snapshot.values and snapshot.next) or snapshot.interrupts:
        return
    sys.stderr.write(f"reins: finishing the interrupted turn of thread {thread}\n")
    values = _send(graph, None, thread, user)
    if out is not None:
        _print_answer(values, out)


def _print_answer(values: Mapping[str, Any], out: TextIO, streamed: StreamedReply | None = None) -> None:
    answer = values.get("answer") or {}
    verdict = answer.get("verdict", "failure")
    reply = printable(redact(values.get("reply", ""), 4000))  # model-written: no escape sequences
    if streamed is None:
        write(reply, out, markdown=True)
    elif not streamed.finish(reply):  # the line the stream started: plain text after its prompt
        out.write(reply + "\n")
    for item in answer.get("evidence", []):
        out.write(f"  · {printable(redact(item, 300))}\n")
    for warning in fallbacks_of(values):
        out.write(f"  note: {printable(redact(warning, 300))}\n")
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
        "models": models_of(values),
        "fallbacks": fallbacks_of(values),
    }


def run(args: argparse.Namespace) -> int:
    if args.file is not None:
        if args.once is not None:
            raise UserError("give either --once or --file, not both")
        args.once = read_text(args.file)
    settings = Settings.from_env()
    from graphs.assistant import build_graph  # the CLI is the application's entry point
    from runtime.checkpoint import checkpointer_from_settings
    from runtime.memory_store import open_store

    from runtime.runs import keep_latest_checkpoints

    thread = args.thread or f"chat-{uuid.uuid4().hex[:12]}"
    user = (args.user or "local").strip() or "local"
    message = None if args.once is None else _check_message(args.once)  # before anything is opened or written
    scope = args.memory_scope
    if args.memory:
        if message is not None:
            raise UserError("--memory lists the notes; it does not take --once")
        with open_store(settings) as opened:
            return _list_notes(opened.store, user, args.thread, args.json)
    if args.json and message is None:
        raise UserError("--json needs --once")
    with checkpointer_from_settings(settings) as checkpointer, open_store(settings) as opened:
        graph = _build(build_graph, checkpointer, opened.store)
        try:
            if args.thread:
                _finish_interrupted_turn(graph, thread, user, None if args.json else sys.stdout)
            if message is None:
                return _interactive(graph, thread, user, settings, scope)
            if not args.json:
                _stand_in_first(settings, sys.stdout)
            streamed = None if args.json else _streamer(sys.stdout)
            values = _send(graph, message, thread, user, streamed=streamed, scope=scope)
            return _report_turn(graph, values, thread, as_json=args.json, streamed=streamed)
        finally:
            if not args.keep_history:
                keep_latest_checkpoints(checkpointer, thread)


def _stand_in_first(settings: Settings, out: TextIO) -> None:
    """Say first when the offline stand-in answers: its replies are rules', not a language model's."""
    from runtime.models import OFFLINE_LABEL, model_set_from_settings

    if model_set_from_settings(settings).label("chat") == OFFLINE_LABEL:
        out.write(STAND_IN_NOTICE + "\n")


def _streamer(out: TextIO) -> StreamedReply | None:
    """On a terminal the reply is printed as it is written; elsewhere (a pipe, a file) once, checked."""
    return StreamedReply(out) if out.isatty() else None


def _build(build_graph: Any, checkpointer: Any, store: Any) -> Any:
    from policies.mcp_config import McpConfigError

    from runtime.toolbox import chat_servers

    try:
        _, servers = chat_servers()  # REINS_MCP_CONFIG checked (and its servers started) before the first message
    except McpConfigError as error:  # a broken file: bad configuration
        raise UserError(str(error)) from None
    for notice in servers.notices:  # another host's fields: what was read differently, or ignored
        sys.stderr.write(f"reins: {redact(notice, 300)}\n")
    for server in servers.servers:
        if server.problem:
            sys.stderr.write(f"reins: MCP server {server.name!r} cannot start (left out): {server.problem_line()}\n")
    from cli.doctor_audit import refuse_over_caps

    refuse_over_caps("assistant")
    return build_graph(checkpointer=checkpointer, store=store)


def answer_pauses(graph: Any, values: dict[str, Any], thread: str, user: str,
                  ask: Any = None) -> dict[str, Any] | None:
    """Ask every pause of the turn in the terminal and resume; None when input ends first."""
    from langgraph.types import Command

    from runtime.toolbox import chat_toolset
    from runtime.user_input import ResumeRefused

    while waiting := pending(graph, thread):
        decision = ask_pause(waiting[0], ask or input)
        if decision is None:
            return None
        problem = check(chat_toolset(), waiting[0], decision)
        if problem:
            sys.stderr.write(f"reins: {redact(problem, 300)}\n")
            continue
        try:
            values = _send(graph, Command(resume=decision), thread, user)
        except ResumeRefused as error:  # taken elsewhere meanwhile: show the thread as it is now
            sys.stderr.write(f"reins: {redact(str(error), 300)}\n")
    return values


def resume_assistant(saver: Any, settings: Settings, thread: str, decision: Any, *, as_json: bool,
                     user: str | None = None) -> int | None:
    """``reins resume`` for an assistant thread paused at a tool approval or a question; None when
    the thread has no such pause (then it is another graph's). A decision that does not fit is
    refused before anything runs: the call stays paused. The turn goes on as the user it started
    with; ``user`` (``--user``), when given, must be that user."""
    from langgraph.types import Command

    from graphs.assistant import build_graph
    from runtime.memory_store import open_store
    from runtime.toolbox import chat_toolset
    from runtime.user_input import ResumeRefused

    with open_store(settings) as opened:
        graph = _build(build_graph, saver, opened.store)
        waiting = pending(graph, thread)
        if not waiting:
            return None
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
    from nodes.assistant.identity import identity_of

    values = graph.get_state({"configurable": {"thread_id": thread}}).values or {}
    return values.get("identity") or identity_of(None)


def _report_turn(graph: Any, values: dict[str, Any], thread: str, *, as_json: bool,
                 streamed: StreamedReply | None = None) -> int:
    """Print a turn that ran to its answer or to a pause (then how to resume); its exit code."""
    waiting = pending(graph, thread)
    if as_json:
        print_json({**_payload(values, thread), "pending": waiting})
    elif waiting:
        sys.stderr.write(f"{describe(waiting[0])}\n{hint(thread, waiting[0])}\n")
    else:
        _print_answer(values, sys.stdout, streamed)
    return EXIT_PAUSED if waiting else exit_code_for(values)


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


def _interactive(graph: Any, thread: str, user: str, settings: Settings, scope: str = "thread") -> int:
    sys.stderr.write(f"Reins assistant — thread {thread}. Type /help for commands, 'exit' to leave.\n")
    _stand_in_first(settings, sys.stdout)
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
        streamed = _streamer(sys.stdout)
        try:
            values = _send(graph, message, thread, user, streamed=streamed, scope=scope)
            values = answer_pauses(graph, values, thread, user)
        except Exception as error:  # one failed message does not end the session
            sys.stderr.write(f"reins: failed: {printable(safe_error(error, 300))}\n")  # a provider's: its cause
            continue
        if values is None:  # input ended while a call waited: it stays paused on the thread
            sys.stderr.write(f"reins: paused; resume with: reins resume {thread} --decision '<json>'\n")
            return EXIT_PAUSED
        if streamed is None or not streamed.text:
            sys.stdout.write("assistant> ")
        _print_answer(values, sys.stdout, streamed)
