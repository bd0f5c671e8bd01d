"""Slash commands answered by rule: ``/help``, unknown commands, usage, and a pipeline that is not
installed. The pipelines themselves run as subgraph nodes (``nodes/assistant/pipeline.py``)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from nodes.assistant.deps import progress_for
from nodes.assistant.state import AssistantState
from policies.redaction import redact
from policies.slash_commands import HELP, help_text, parse_slash, unknown_command_message, usage_problem

REPLY_LIMIT = 4000  # a task list or a report's conclusion and findings, bounded (policies/pipeline_reply.py)


def is_slash(state: AssistantState) -> bool:
    return parse_slash(state.get("request", "")) is not None


def reply_update(state: AssistantState, reply: str, verdict: str, pipeline: dict[str, Any], evidence: list[str]) -> dict[str, Any]:
    """The state update of a turn a slash command answered."""
    reply = redact(reply, REPLY_LIMIT)
    return {
        "reply": reply,
        "answer": {"summary": reply, "evidence": evidence, "verdict": verdict},
        "pipeline": pipeline,
        "messages": [AIMessage(content=reply)],
        "trace": [*state.get("trace", []), f"slash: /{pipeline['command']} → {pipeline['status']}"],
    }


def unavailable_message(command: str) -> str:
    return f"The /{command} pipeline is not available in this installation."


def run_slash_command(state: AssistantState, runtime: Any) -> dict[str, Any]:
    command = parse_slash(state.get("request", ""))
    assert command is not None  # routed here only for slash input
    progress = progress_for(runtime)
    if command.name == HELP:
        progress.end("completed", "help")
        return reply_update(state, help_text(), "success", {"command": HELP, "status": "help"}, [])
    if not command.known:
        name = redact(command.name, 40)
        progress.end("completed", "unknown command")
        return reply_update(state, unknown_command_message(name), "failure", {"command": name, "status": "unknown_command"}, [])
    problem = usage_problem(command)
    if problem:
        progress.end("completed", "usage")
        return reply_update(state, problem, "failure", {"command": command.name, "status": "bad_input"}, [])
    # A known pipeline command with an argument reaches this node only when that pipeline is absent.
    progress.end("failed", "pipeline not available")
    return reply_update(state, unavailable_message(command.name), "failure", {"command": command.name, "status": "unavailable"}, [])
