"""One chat turn, shared by ``reins chat`` (``cli/chat.py``), its interactive loop
(``cli/chat_loop.py``) and ``reins resume``: the assistant built for the CLI, a message sent and
shown, its pauses asked, and a turn that stopped mid-way closed or finished (on the models it
started on only)."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from reins.policies.assistant.memory import DEFAULT_SCOPE
from reins.policies.models.model_notice import STAND_IN_NOTICE
from reins.policies.text.redaction import redact
from reins.policies.assistant.retention import durability_for
from reins.policies.text.terminal_text import printable
from reins.cli.chat_pauses import ask_pause, check, pending
from reins.cli.chat_screen import ChatProgress, ChatScreen, declined
from reins.cli.errors import UserError
from reins.cli.model_config import fallbacks_of, models_switched, stamped
from reins.cli.render import colour, say, stream_run, styled, write
from reins.runtime.config.settings import Settings

MAX_MESSAGE_CHARS = 20_000
GRAPH_NAME = "assistant"
BUDGET_KEY = "budget"  # beside a turn's values: what it used next to its worst case (not a state key)


def _check_message(message: str) -> str:
    text = (message or "").strip()
    if not text:
        raise UserError("the message is empty; type a question or /help")
    if len(text) > MAX_MESSAGE_CHARS:
        raise UserError(f"the message is longer than {MAX_MESSAGE_CHARS} characters")
    return text


def _send(graph: Any, message: str | Any | None, thread: str, user: str, screen: ChatScreen | None = None,
          scope: str = DEFAULT_SCOPE, asks: bool = False, settings: Settings | None = None) -> dict[str, Any]:
    """Send a message (text, or content blocks: text and images; or a ``Command`` resuming a pause; None: finish the thread's interrupted turn
    from its checkpoint) and return the thread's values. ``screen`` shows the turn on a terminal;
    ``asks``: a person answers pauses now (the interactive chat), so skill drafts are offered;
    ``settings``: the models in force, recorded with every checkpoint of the turn."""
    from langchain_core.messages import HumanMessage

    from reins.cli.doctor_audit import configured_options, run_caps
    from reins.runtime.execution.budget import configured_budget

    started = time.monotonic()
    with run_caps():  # every request checked against the user's caps before it is made
        outcome = stream_run(
            graph,
            {"messages": [HumanMessage(content=message)]} if isinstance(message, (str, list)) else message,
            config=_config(thread, settings),
            context={"user_id": user, "memory_scope": scope, "review_skill_drafts": asks},
            view=screen or ChatProgress(),  # type: ignore[arg-type]  # a ProgressView's two methods
            durability=durability_for(can_pause=True),  # a tool call may pause for approval
            on_reply=screen.reply if screen is not None else None,
        )
    values = dict(outcome.values)
    # what this turn used beside its worst case (the turn's metrics and records start afresh; a
    # pipeline's model calls are among the turn's metrics, its tool calls in its outcome)
    tool_calls = len(values.get("records") or []) + int((values.get("pipeline") or {}).get("tool_calls", 0) or 0)
    values[BUDGET_KEY] = configured_budget("assistant", values, tool_calls, time.monotonic() - started,
                                           **configured_options("assistant", Settings.from_env()))
    return values


def _config(thread: str, settings: Settings | None) -> dict[str, Any]:
    """The turn's config: it names the graph (`reins runs` says how to resume) and, given the
    settings, records the models in force, so a turn is finished only on the models it started on."""
    from reins.runtime.config.tracing import run_config

    config = run_config(GRAPH_NAME, thread_id=thread)
    return config if settings is None else stamped(config, settings)


def interrupted_turn(graph: Any, thread: str) -> Any:
    """The thread's state when its last turn stopped mid-way (Ctrl-C, a crash; not a pause), else None."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    return snapshot if snapshot.values and snapshot.next and not snapshot.interrupts else None


def close_interrupted_turn(graph: Any, thread: str) -> None:
    """Close a turn that stopped mid-way, so the next message starts a new turn: its steps not yet
    run are dropped; what it completed stays in the thread."""
    from langgraph.graph import END

    if interrupted_turn(graph, thread) is not None:
        graph.update_state({"configurable": {"thread_id": thread}}, None, as_node=END)


def finish_interrupted_turn(graph: Any, thread: str, user: str, scope: str, settings: Settings,
                            screen: ChatScreen | None = None) -> dict[str, Any] | None:
    """Finish the thread's turn that stopped mid-way from its checkpoint (its completed steps are
    not re-run), on the models it started on only; None when there is none or the models differ
    (then said, naming both)."""
    snapshot = interrupted_turn(graph, thread)
    if snapshot is None:
        return None
    switched = models_switched(snapshot.metadata, settings)
    if switched:
        say(f"reins: the interrupted turn of thread {thread} is not finished on other models than it started "
            f"on ({switched}); configure those models to finish it, or send its request again as a new message")
        return None
    say(f"reins: finishing the interrupted turn of thread {thread}")
    return _send(graph, None, thread, user, screen, scope, settings=settings)


def _print_answer(values: Mapping[str, Any], out: TextIO, screen: ChatScreen | None = None) -> None:
    answer = values.get("answer") or {}
    verdict = answer.get("verdict", "failure")
    reply = printable(redact(values.get("reply", ""), 4000))  # model-written: no escape sequences
    plain = bool(values.get("pipeline"))  # a command's output (help, a task list): text, never Markdown
    if screen is None:
        write(reply, out, markdown=not plain)
    else:  # in place of the streamed draft
        screen.finish(reply, plain=plain)
    for item in answer.get("evidence", []):
        say(f"  · {printable(redact(item, 300))}", out)
    for warning in fallbacks_of(values):
        say(f"  note: {printable(redact(warning, 300))}", out)
    status = {"success": "completed", "partial": "needs_review", "failure": "failed"}.get(verdict, "failed")
    tools = declined(values.get("records"))
    if tools and verdict != "success":  # the user's decision, not a failure of the assistant
        out.write(colour(f"[not run: you declined {', '.join(dict.fromkeys(tools))}]", "paused", out) + "\n")
        return
    out.write(colour(f"[{verdict}]", status, out) + "\n")
    if values.get(BUDGET_KEY):
        say(f"  budget (used/worst case): {values[BUDGET_KEY]['line']}", out)


def open_chat(settings: Settings, stack: Any) -> tuple[Any, Any]:
    """The checkpointer and the built assistant graph, their resources held open by ``stack``."""
    from reins.graphs.assistant import build_graph
    from reins.runtime.persistence.checkpoint import checkpointer_from_settings
    from reins.runtime.persistence.memory_store import open_store

    checkpointer = stack.enter_context(checkpointer_from_settings(settings))
    opened = stack.enter_context(open_store(settings))
    return checkpointer, _build(build_graph, checkpointer, opened.store)


def _stand_in_first(settings: Settings, out: TextIO) -> None:
    """Say first when the offline stand-in answers: its replies are rules', not a language model's."""
    from reins.runtime.llm.models import OFFLINE_LABEL, model_set_from_settings

    if model_set_from_settings(settings).label("chat") == OFFLINE_LABEL:
        say(STAND_IN_NOTICE, out)


def _screen_for(out: TextIO) -> ChatScreen | None:
    """On a terminal the turn is shown live (the reply rendered as it is written); elsewhere (a pipe,
    a file, ``NO_COLOR``) the checked reply is printed once, plain."""
    return ChatScreen(out) if styled(out) else None


def _build(build_graph: Any, checkpointer: Any, store: Any) -> Any:
    servers = checked_start()
    for notice in servers.notices:  # another host's fields: what was read differently, or ignored
        sys.stderr.write(f"reins: {redact(notice, 300)}\n")
    for server in servers.servers:
        if server.problem:
            sys.stderr.write(f"reins: MCP server {server.name!r} cannot start (left out): {server.problem_line()}\n")
    from reins.cli.doctor_audit import refuse_over_caps

    refuse_over_caps("assistant")
    return build_graph(checkpointer=checkpointer, store=store)


def checked_start() -> Any:
    """The user's files read and checked whole before anything is opened or any model called: the MCP
    configuration (its servers started), the persona and the flow rules; a bad one is one line."""
    from reins.runtime.tools.mcp_config import McpConfigError

    from reins.runtime.tools.toolbox import chat_servers

    try:
        _, servers = chat_servers()  # REINS_MCP_CONFIG checked (and its servers started) before the first message
    except McpConfigError as error:  # a broken file: bad configuration
        raise UserError(str(error)) from None
    from reins.runtime.config.persona import PersonaError, persona_in_force

    try:  # REINS_ASSISTANT_PROMPT_FILE checked before the first message, as the MCP file is
        persona_in_force(None, None)
    except PersonaError as error:
        raise UserError(redact(str(error), 300)) from None
    from reins.runtime.tools.flow_rules import FlowRulesError, rules_in_force

    try:  # REINS_FLOW_RULES too: a broken file refused before any model call, not at the first tool step
        rules_in_force(None, Settings.from_env().flow_rules)
    except FlowRulesError as error:
        raise UserError(redact(str(error), 300)) from None
    return servers


def answer_pauses(graph: Any, values: dict[str, Any], thread: str, user: str, ask: Any = None,
                  screen: ChatScreen | None = None, scope: str = DEFAULT_SCOPE,
                  settings: Settings | None = None) -> dict[str, Any] | None:
    """Ask every pause of the turn in the terminal and resume; None when input ends first."""
    from langgraph.types import Command

    from reins.runtime.tools.toolbox import chat_toolset
    from reins.runtime.execution.user_input import ResumeRefused

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
            values = _send(graph, Command(resume=decision), thread, user, screen, scope, asks=True,
                           settings=settings)
        except ResumeRefused as error:  # taken elsewhere meanwhile: show the thread as it is now
            sys.stderr.write(f"reins: {redact(str(error), 300)}\n")
    return values
