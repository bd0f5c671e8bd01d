"""``/tasklist`` and ``/delivery-chain``: the pipelines as subgraph nodes of the assistant.

Each pipeline is compiled once with the assistant and runs inside its node as a LangGraph subgraph:
Studio draws it (``xray``), its progress streams through the assistant (``subgraphs=True``), it
checkpoints in the assistant's thread, and a tasklist review pause pauses the assistant's thread
until the decision is sent there (``Command(resume=...)``). The reply shows the outcome — the task
list, or the report's conclusion, blockers and findings — bounded and redacted.
"""

from __future__ import annotations

from typing import Any

from langgraph.errors import GraphInterrupt

from nodes.assistant.deps import PipelineRoute, progress_for
from nodes.assistant.slash import REPLY_LIMIT, reply_update
from nodes.assistant.state import AssistantState
from policies.redaction import redact
from policies.slash_commands import parse_slash, pipeline_verdict
from runtime.calls import Subgraph, node
from runtime.contracts import safe_error


def node_name(command: str) -> str:
    """The assistant's node for a pipeline command (``delivery-chain`` → ``delivery_chain``)."""
    return command.replace("-", "_")


def run_pipeline(state: AssistantState, runtime: Any, *, command_name: str, route: PipelineRoute, graph: Any):
    command = parse_slash(state.get("request", ""))
    assert command is not None and command.name == command_name  # routed here only for this command
    progress = progress_for(runtime)
    with progress.step(f"pipeline-{command_name}", f"Run /{command_name}") as step:
        try:
            result = yield Subgraph(
                graph,
                route.make_input(command.argument, state.get("request", "")),
                route.make_context(getattr(runtime, "context", None)),
            )
            status, summary = route.read_outcome(result)
        except GraphInterrupt:  # a review pause: the assistant's thread waits for the decision
            raise
        except Exception as error:  # the pipeline's failure is reported, never a crash
            step.status, step.summary = "failed", "pipeline failed"
            progress.end("failed", f"/{command_name} failed")
            message = f"The /{command_name} pipeline failed: {safe_error(error, 300)}"
            return reply_update(state, message, "failure", {"command": command_name, "status": "failed"}, [])
        step.summary = f"status {status}"
    verdict = pipeline_verdict(command_name, status)
    progress.end("completed", f"/{command_name}: {status}")
    reply = f"/{command_name} finished with status {status}.\n\n{summary}".strip()
    pipeline = {"command": command_name, "status": status, "summary": redact(summary, REPLY_LIMIT)}
    return reply_update(state, reply, verdict, pipeline, [f"pipeline /{command_name}: {status}"])


def make_pipeline_node(command_name: str, route: PipelineRoute, graph: Any) -> Any:
    """The node running ``graph`` for ``/<command_name>`` (sync under invoke, async under ainvoke)."""

    def pipeline(state: AssistantState, runtime: Any, *, graph: Any):
        return (yield from run_pipeline(state, runtime, command_name=command_name, route=route, graph=graph))

    return node(pipeline, node_name(command_name), subgraph=graph)
