"""``/tasklist`` and ``/delivery-chain``: the pipelines as subgraph nodes of the assistant.

Each pipeline is compiled once with the assistant and runs inside its node as a LangGraph subgraph:
Studio draws it (``xray``), its progress streams through the assistant (``subgraphs=True``), it
checkpoints in the assistant's thread, and a tasklist review pause pauses the assistant's thread
until the decision is sent there (``Command(resume=...)``). The reply shows the outcome — the task
list, or the report's conclusion, blockers and findings — bounded and redacted.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from nodes.assistant.context import AssistantContext
from nodes.assistant.deps import PipelineRoute, progress_for
from nodes.assistant.slash import REPLY_LIMIT, reply_update
from nodes.assistant.state import AssistantState, NodeSteps, PipelineOutcome
from policies.redaction import redact
from policies.slash_commands import parse_slash, pipeline_verdict
from runtime.calls import Subgraph, node
from runtime.steps import attempt, recorded_step


def node_name(command: str) -> str:
    """The assistant's node for a pipeline command (``delivery-chain`` → ``delivery_chain``)."""
    return command.replace("-", "_")


def run_pipeline(state: AssistantState, runtime: Runtime[AssistantContext], *, command_name: str, route: PipelineRoute,
                 graph: Any) -> NodeSteps:
    command = parse_slash(state.get("request", ""))
    assert command is not None and command.name == command_name  # routed here only for this command
    progress = progress_for(runtime)
    with recorded_step(progress, f"pipeline-{command_name}", f"Run /{command_name}") as step:
        # A review pause is not a failure: it propagates and the assistant's thread waits for the decision.
        run = yield from attempt(
            Subgraph(graph, route.make_input(command.argument, state.get("request", "")), route.make_context(runtime.context))
        )
        if not run.ok:  # the pipeline's failure is reported, never a crash
            step.fail("pipeline failed")
        else:
            status, summary = route.read_outcome(run.value)
            step.summary = f"status {status}"
    if not run.ok:
        progress.end("failed", f"/{command_name} failed")
        message = f"The /{command_name} pipeline failed: {run.reason(300)}"
        return reply_update(state, message, "failure", {"command": command_name, "status": "failed"}, [], step.trace())
    verdict = pipeline_verdict(command_name, status)
    progress.end("completed", f"/{command_name}: {status}")
    reply = f"/{command_name} finished with status {status}.\n\n{summary}".strip()
    pipeline: PipelineOutcome = {"command": command_name, "status": status, "summary": redact(summary, REPLY_LIMIT)}
    return reply_update(state, reply, verdict, pipeline, [], step.trace())


def make_pipeline_node(command_name: str, route: PipelineRoute, graph: Any) -> Any:
    """The node running ``graph`` for ``/<command_name>`` (sync under invoke, async under ainvoke)."""
    return node(run_pipeline, node_name(command_name), subgraph=graph, command_name=command_name, route=route)
