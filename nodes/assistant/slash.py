"""Slash routes: ``/help``, the two pipelines as subgraphs, and a clear answer for anything else."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.errors import GraphInterrupt

from nodes.assistant.deps import AssistantDeps, progress_for
from nodes.assistant.state import AssistantState
from policies.redaction import redact
from policies.slash_commands import (
    HELP,
    help_text,
    parse_slash,
    pipeline_verdict,
    unknown_command_message,
    usage_problem,
)
from runtime.contracts import safe_error

REPLY_LIMIT = 2000


def is_slash(state: AssistantState) -> bool:
    return parse_slash(state.get("request", "")) is not None


def _reply(state: AssistantState, reply: str, verdict: str, pipeline: dict[str, Any], evidence: list[str]) -> dict[str, Any]:
    reply = redact(reply, REPLY_LIMIT)
    return {
        "reply": reply,
        "answer": {"summary": reply, "evidence": evidence, "verdict": verdict},
        "pipeline": pipeline,
        "messages": [AIMessage(content=reply)],
        "trace": [*state.get("trace", []), f"slash: /{pipeline['command']} → {pipeline['status']}"],
    }


def run_slash_command(state: AssistantState, runtime: Any, *, deps: AssistantDeps) -> dict[str, Any]:
    command = parse_slash(state.get("request", ""))
    assert command is not None  # routed here only for slash input
    progress = progress_for(runtime)
    if command.name == HELP:
        progress.end("completed", "help")
        return _reply(state, help_text(), "success", {"command": HELP, "status": "help"}, [])
    if not command.known:
        name = redact(command.name, 40)
        progress.end("completed", "unknown command")
        return _reply(state, unknown_command_message(name), "failure", {"command": name, "status": "unknown_command"}, [])
    problem = usage_problem(command)
    if problem:
        progress.end("completed", "usage")
        return _reply(state, problem, "failure", {"command": command.name, "status": "bad_input"}, [])
    route = deps.pipelines.get(command.name)
    if route is None:
        progress.end("failed", "pipeline not available")
        message = f"The /{command.name} pipeline is not available in this installation."
        return _reply(state, message, "failure", {"command": command.name, "status": "unavailable"}, [])
    context = getattr(runtime, "context", None)
    pipeline_context = {"model": getattr(context, "model", None), "contract_mode": getattr(context, "contract_mode", None)}
    with progress.step(f"pipeline-{command.name}", f"Run /{command.name}") as step:
        try:
            graph = route.build(deps.models_for(runtime))
            result = graph.invoke(route.make_input(command.argument, state.get("request", "")), context=pipeline_context)
            status, summary = route.read_outcome(result)
        except GraphInterrupt:
            raise
        except ImportError:
            step.status, step.summary = "failed", "pipeline not available"
            progress.end("failed", "pipeline not available")
            message = f"The /{command.name} pipeline is not available in this installation."
            return _reply(state, message, "failure", {"command": command.name, "status": "unavailable"}, [])
        except Exception as error:  # the pipeline's failure is reported, never a crash
            step.status, step.summary = "failed", "pipeline failed"
            progress.end("failed", f"/{command.name} failed")
            message = f"The /{command.name} pipeline failed: {safe_error(error, 300)}"
            return _reply(state, message, "failure", {"command": command.name, "status": "failed"}, [])
        step.summary = f"status {status}"
    verdict = pipeline_verdict(command.name, status)
    progress.end("completed", f"/{command.name}: {status}")
    reply = f"/{command.name} finished with status {status}.\n\n{summary}".strip()
    pipeline = {"command": command.name, "status": status, "summary": redact(summary, REPLY_LIMIT)}
    return _reply(state, reply, verdict, pipeline, [f"pipeline /{command.name}: {status}"])
