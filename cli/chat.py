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
import time
import uuid
from collections.abc import Mapping
from typing import Any, TextIO

from policies.memory import DEFAULT_SCOPE, SCOPES
from policies.model_notice import STAND_IN_NOTICE
from policies.redaction import redact, redact_mapping
from policies.retention import durability_for
from policies.terminal_text import printable
from cli.chat_pauses import ask_pause, check, describe, hint, pending
from cli.chat_screen import ChatProgress, ChatScreen, declined
from cli.errors import EXIT_BAD_INPUT, EXIT_BLOCKED, EXIT_FAILED, EXIT_NEEDS_ATTENTION, EXIT_OK, EXIT_PAUSED, UserError
from cli.inputs import read_text
from cli.model_config import fallbacks_of, models_of
from cli.render import ProgressView, RunInterrupted, colour, print_json, stream_run, styled, write
from runtime.config.settings import Settings

MAX_MESSAGE_CHARS = 20_000
EXIT_WORDS = frozenset({"exit", "quit", ":q", "/exit", "/quit"})
_BAD_INPUT_STATUSES = frozenset({"unknown_command", "bad_input"})
GRAPH_NAME = "assistant"
BUDGET_KEY = "budget"  # beside a turn's values: what it used next to its worst case (not a state key)


class _HelpWithTools(argparse.Action):
    """``reins chat --help``: the usual help, then the chat tools as their declarations describe
    them (built only when asked: loading the tools is slower than parsing arguments)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show this help and the tools")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from runtime.tools.toolbox import chat_toolset

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
    parser.add_argument("--memory-scope", choices=SCOPES, default=DEFAULT_SCOPE,
                        help="which notes a turn recalls and keeps: the user's, shared by their sessions "
                        "(default), or this thread's only")
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


def _send(graph: Any, message: str | Any | None, thread: str, user: str, screen: ChatScreen | None = None,
          scope: str = DEFAULT_SCOPE, asks: bool = False) -> dict[str, Any]:
    """Send a message (or a ``Command`` resuming a pause; None: finish the thread's interrupted turn
    from its checkpoint) and return the thread's values. ``screen`` shows the turn on a terminal;
    ``asks``: a person answers pauses now (the interactive chat), so skill drafts are offered."""
    from langchain_core.messages import HumanMessage

    from runtime.config.tracing import run_config

    from cli.doctor_audit import run_caps
    from runtime.execution.budget import configured_budget

    started = time.monotonic()
    with run_caps():  # every request checked against the user's caps before it is made
        outcome = stream_run(
            graph,
            {"messages": [HumanMessage(content=message)]} if isinstance(message, str) else message,
            config=run_config(GRAPH_NAME, thread_id=thread),  # names the graph: `reins runs` says how to resume
            context={"user_id": user, "memory_scope": scope, "review_skill_drafts": asks},
            view=screen or ChatProgress(),  # type: ignore[arg-type]  # a ProgressView's two methods
            durability=durability_for(can_pause=True),  # a tool call may pause for approval
            on_reply=screen.reply if screen is not None else None,
        )
    values = dict(outcome.values)
    # what this turn used beside its worst case (the turn's metrics and records start afresh)
    values[BUDGET_KEY] = configured_budget("assistant", values, len(values.get("records") or []),
                                           time.monotonic() - started)
    return values


def _finish_interrupted_turn(graph: Any, thread: str, user: str, out: TextIO | None,
                             scope: str = DEFAULT_SCOPE) -> None:
    """A turn killed mid-way is finished first (its completed steps are not re-run), so the next
    message starts from a complete conversation."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    if not (snapshot.values and snapshot.next) or snapshot.interrupts:
        return
    sys.stderr.write(f"reins: finishing the interrupted turn of thread {thread}\n")
    screen = _screen_for(out) if out is not None else None
    try:
        values = _send(graph, None, thread, user, screen, scope)
        if out is not None:
            _print_answer(values, out, screen)
    finally:
        if screen is not None:
            screen.stop()


def _print_answer(values: Mapping[str, Any], out: TextIO, screen: ChatScreen | None = None) -> None:
    answer = values.get("answer") or {}
    verdict = answer.get("verdict", "failure")
    reply = printable(redact(values.get("reply", ""), 4000))  # model-written: no escape sequences
    if screen is None:
        write(reply, out, markdown=True)
    else:  # in place of the streamed draft
        screen.finish(reply)
    for item in answer.get("evidence", []):
        out.write(f"  · {printable(redact(item, 300))}\n")
    for warning in fallbacks_of(values):
        out.write(f"  note: {printable(redact(warning, 300))}\n")
    status = {"success": "completed", "partial": "needs_review", "failure": "failed"}.get(verdict, "failed")
    tools = declined(values.get("records"))
    if tools and verdict != "success":  # the user's decision, not a failure of the assistant
        out.write(colour(f"[not run: you declined {', '.join(dict.fromkeys(tools))}]", "paused", out) + "\n")
        return
    out.write(colour(f"[{verdict}]", status, out) + "\n")
    if values.get(BUDGET_KEY):
        out.write(f"  budget (used/worst case): {values[BUDGET_KEY]['line']}\n")


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
    from runtime.contracts import fallbacks_per_role, metrics_totals
    from runtime.execution.steps import METRICS_KEY

    per_contract = values.get(METRICS_KEY) or {}
    return {**metrics_totals(per_contract), "fallbacks_per_role": fallbacks_per_role(per_contract),
            "per_contract": per_contract}


def run(args: argparse.Namespace) -> int:
    if args.file is not None:
        if args.once is not None:
            raise UserError("give either --once or --file, not both")
        args.once = read_text(args.file)
    settings = Settings.from_env()
    from graphs.assistant import build_graph  # the CLI is the application's entry point
    from runtime.persistence.checkpoint import checkpointer_from_settings
    from runtime.persistence.memory_store import open_store

    from runtime.persistence.runs import keep_latest_checkpoints

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
                _finish_interrupted_turn(graph, thread, user, None if args.json else sys.stdout, scope)
            if message is None:
                return _interactive(graph, thread, user, settings, scope)
            if not args.json:
                _stand_in_first(settings, sys.stdout)
            screen = None if args.json else _screen_for(sys.stdout)
            try:
                values = _send(graph, message, thread, user, screen, scope)
                return _report_turn(graph, values, thread, as_json=args.json, screen=screen)
            finally:
                if screen is not None:
                    screen.stop()
        finally:
            if not args.keep_history:
                keep_latest_checkpoints(checkpointer, thread)


def _stand_in_first(settings: Settings, out: TextIO) -> None:
    """Say first when the offline stand-in answers: its replies are rules', not a language model's."""
    from runtime.llm.models import OFFLINE_LABEL, model_set_from_settings

    if model_set_from_settings(settings).label("chat") == OFFLINE_LABEL:
        out.write(STAND_IN_NOTICE + "\n")


def _screen_for(out: TextIO) -> ChatScreen | None:
    """On a terminal the turn is shown live (the reply rendered as it is written); elsewhere (a pipe,
    a file, ``NO_COLOR``) the checked reply is printed once, plain."""
    return ChatScreen(out) if styled(out) else None


def _build(build_graph: Any, checkpointer: Any, store: Any) -> Any:
    from policies.mcp_config import McpConfigError

    from runtime.tools.toolbox import chat_servers

    try:
        _, servers = chat_servers()  # REINS_MCP_CONFIG checked (and its servers started) before the first message
    except McpConfigError as error:  # a broken file: bad configuration
        raise UserError(str(error)) from None
    from runtime.config.persona import PersonaError, persona_in_force

    try:  # REINS_ASSISTANT_PROMPT_FILE checked before the first message, as the MCP file is
        persona_in_force(None, None)
    except PersonaError as error:
        raise UserError(redact(str(error), 300)) from None
    for notice in servers.notices:  # another host's fields: what was read differently, or ignored
        sys.stderr.write(f"reins: {redact(notice, 300)}\n")
    for server in servers.servers:
        if server.problem:
            sys.stderr.write(f"reins: MCP server {server.name!r} cannot start (left out): {server.problem_line()}\n")
    from cli.doctor_audit import refuse_over_caps

    refuse_over_caps("assistant")
    return build_graph(checkpointer=checkpointer, store=store)


def answer_pauses(graph: Any, values: dict[str, Any], thread: str, user: str,
                  ask: Any = None, screen: ChatScreen | None = None, scope: str = DEFAULT_SCOPE) -> dict[str, Any] | None:
    """Ask every pause of the turn in the terminal and resume; None when input ends first."""
    from langgraph.types import Command

    from runtime.tools.toolbox import chat_toolset
    from runtime.execution.user_input import ResumeRefused

    while waiting := pending(graph, thread):
        if screen is not None:
            screen.stop()
        decision = ask_pause(waiting[0], ask or input)
        if decision is None:
            return None
        problem = check(chat_toolset(), waiting[0], decision)
        if problem:
            sys.stderr.write(f"reins: {redact(problem, 300)}\n")
            continue
        try:
            values = _send(graph, Command(resume=decision), thread, user, screen, scope, asks=True)
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
    from runtime.persistence.memory_store import open_store
    from runtime.tools.toolbox import chat_toolset
    from runtime.execution.user_input import ResumeRefused

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
    from nodes.assistant.identity import identity_of

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


def _interactive(graph: Any, thread: str, user: str, settings: Settings, scope: str = DEFAULT_SCOPE) -> int:
    """The chat loop. Ctrl-C during a turn cancels that turn (it is saved; the next message, or
    Enter, finishes it first) and returns to the prompt; Ctrl-C at the prompt right after quits."""
    sys.stderr.write(f"Reins assistant — thread {thread}. Type /help for commands, 'exit' to leave.\n")
    _stand_in_first(settings, sys.stdout)
    cancelled = False  # the last thing the user did was Ctrl-C
    while True:
        try:
            line = input("you> ")
        except EOFError:
            sys.stdout.write("\n")
            return EXIT_OK
        except KeyboardInterrupt:
            if cancelled:
                raise KeyboardInterrupt(f"chat ended; thread {thread} is saved: reins chat --thread {thread}") from None
            cancelled = True
            sys.stderr.write("\n(Ctrl-C again or 'exit' to leave)\n")
            continue
        text = line.strip()
        if not text and not cancelled:
            continue
        if text.lower() in EXIT_WORDS:
            return EXIT_OK
        cancelled = False
        try:
            _finish_interrupted_turn(graph, thread, user, sys.stdout, scope)  # a cancelled turn first
            if not text:
                continue
            message = _check_message(text)
        except UserError as error:
            sys.stderr.write(f"reins: {error}\n")
            continue
        except RunInterrupted as stop:
            cancelled = _cancelled(stop)
            continue
        screen = _screen_for(sys.stdout)
        try:
            values = _send(graph, message, thread, user, screen, scope, asks=True)
            values = answer_pauses(graph, values, thread, user, screen=screen, scope=scope)
        except RunInterrupted as stop:
            cancelled = _cancelled(stop, screen)
            continue
        except Exception as error:  # one failed message does not end the session
            if screen is not None:
                screen.stop()
            from runtime.llm.failures import safe_error  # imported late: the CLI starts without LangChain

            sys.stderr.write(f"reins: failed: {printable(safe_error(error, 300))}\n")  # a provider's: its cause
            continue
        if values is None:  # input ended while a call waited: it stays paused on the thread
            sys.stderr.write(f"reins: paused; resume with: reins resume {thread} --decision '<json>'\n")
            return EXIT_PAUSED
        if screen is None:
            sys.stdout.write("assistant> ")
        _print_answer(values, sys.stdout, screen)
        if screen is not None:
            screen.stop()


def _cancelled(stop: RunInterrupted, screen: ChatScreen | None = None) -> bool:
    """Ctrl-C stopped a turn: say where it is saved and how it goes on; back to the prompt."""
    if screen is not None:
        screen.stop()
    how = "press Enter to finish it, or send your next message (it finishes first)" if stop.saved else "it is lost"
    sys.stderr.write(f"\nreins: turn cancelled: {stop}; {how}. Ctrl-C again quits.\n")
    return True
