"""Slash commands answered by rule: ``/help``, unknown commands, usage, and a pipeline that is not
installed. The pipelines themselves run as subgraph nodes (``nodes/assistant/pipeline.py``)."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import AssistantDeps, progress_for
from reins.nodes.assistant.state import AssistantState, PipelineOutcome, Update, traced
from reins.policies.text.redaction import redact, redact_secrets, truncate
from reins.policies.assistant.slash_commands import (
    HELP,
    SlashCommand,
    help_text,
    parse_slash,
    unknown_command_message,
    usage_problem,
)
from reins.runtime.tools.registry import ScopedTools
from reins.runtime.execution.steps import recorded_step
from reins.schemas.assistant import Verdict
from reins.schemas.trace import TraceRecord

REPLY_LIMIT = 4000  # a task list or a report's conclusion and findings, bounded (policies/assistant/pipeline_reply.py)


def is_slash(state: AssistantState) -> bool:
    return parse_slash(state.get("request", "")) is not None


def reply_update(state: AssistantState, reply: str, verdict: Verdict, pipeline: PipelineOutcome, evidence: list[str],
                 record: TraceRecord, *, keep_paths: bool = False) -> Update:
    """The state update of a turn a slash command answered; ``record``: its step in the trace.
    ``keep_paths``: the reply is this installation's own listing (``/help``), whose tool
    descriptions may show a path such as ``/srv/notes/<name>``: only secrets are removed from it."""
    reply = truncate(redact_secrets(reply), REPLY_LIMIT) if keep_paths else redact(reply, REPLY_LIMIT)
    return {
        "reply": reply,
        "answer": {"summary": reply, "evidence": evidence, "verdict": verdict},
        "pipeline": pipeline,
        "messages": [AIMessage(content=reply)],
        "trace": traced(state, record),
    }


def unavailable_message(command: str) -> str:
    return f"The /{command} pipeline is not available in this installation."


def _by_rule(command: SlashCommand, tools: ScopedTools) -> tuple[str, Verdict, PipelineOutcome, str]:
    """(reply, verdict, outcome, run summary) of a command answered by rule."""
    if command.name == HELP:
        return help_text(tools.help_lines()), "success", {"command": HELP, "status": "help"}, "help"
    if not command.known:
        name = redact(command.name, 40)
        return unknown_command_message(name), "failure", {"command": name, "status": "unknown_command"}, "unknown command"
    problem = usage_problem(command)
    if problem:
        return problem, "failure", {"command": command.name, "status": "bad_input"}, "usage"
    # A known pipeline command with an argument reaches this node only when that pipeline is absent.
    outcome: PipelineOutcome = {"command": command.name, "status": "unavailable"}
    return unavailable_message(command.name), "failure", outcome, "pipeline not available"


@declare(guards=("slash_commands",))
def run_slash_command(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> Update:
    command = parse_slash(state.get("request", ""))
    assert command is not None  # routed here only for slash input
    progress = progress_for(runtime)
    with recorded_step(progress, "slash", "Answer the command") as step:
        reply, verdict, outcome, summary = _by_rule(command, deps.tools_for(runtime))
        step.summary = f"/{outcome['command']} → {outcome['status']}"
    progress.end("failed" if outcome["status"] == "unavailable" else "completed", summary)
    return reply_update(state, reply, verdict, outcome, [], step.trace(), keep_paths=outcome["status"] == "help")
