"""``/tasklist`` and ``/delivery-chain``: the pipelines as subgraph nodes of the assistant.

Each pipeline is compiled once with the assistant and runs inside its node as a LangGraph subgraph:
Studio draws it (``xray``), its progress streams through the assistant (``subgraphs=True``), it
checkpoints in the assistant's thread, and a tasklist review pause pauses the assistant's thread
until the decision is sent there (``Command(resume=...)``), with the review question as the
thread's last message (``nodes/assistant/pipeline_pause.py``). The reply shows the outcome — the
task list, or the report's conclusion, blockers and findings — bounded and redacted.
"""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from collections.abc import Mapping
from typing import Any

from langgraph.errors import GraphInterrupt
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import PipelineRoute, progress_for
from reins.nodes.assistant.pipeline_pause import held, review_message
from reins.nodes.assistant.slash import REPLY_LIMIT, reply_update
from reins.nodes.assistant.state import AssistantState, NodeSteps, PipelineOutcome, PipelineReview, traced
from reins.policies.text.redaction import redact
from reins.policies.assistant.slash_commands import parse_slash, pipeline_verdict
from reins.runtime.execution.calls import Subgraph, node
from reins.runtime.execution.steps import attempt, recorded_step


def node_name(command: str) -> str:
    """The assistant's node for a pipeline command (``delivery-chain`` → ``delivery_chain``)."""
    return command.replace("-", "_")


@declare(acts=("pipeline",))
def run_pipeline(state: AssistantState, runtime: Runtime[AssistantContext], *, command_name: str, route: PipelineRoute,
                 graph: Any) -> NodeSteps:
    command = parse_slash(state.get("request", ""))
    assert command is not None and command.name == command_name  # routed here only for this command
    review = state.get("pipeline_review")
    # The step after a pause was announced: the thread waits here, and the decision goes on into
    # the held pipeline (a pausing pipeline is held: nodes/assistant/pipeline_pause.py).
    decision = Command(resume=interrupt(review["value"], response_schema=review.get("response_schema"))) if review else None
    progress = progress_for(runtime)
    with recorded_step(progress, f"pipeline-{command_name}", f"Run /{command_name}") as step:
        given = route.make_input(command.argument, state.get("request", ""))
        try:
            run = yield from attempt(
                Subgraph(graph, decision or ({"input": given} if route.pauses else given), route.make_context(runtime.context))
            )
        except GraphInterrupt as pause:
            if not (route.pauses and pause.args and pause.args[0]):
                raise
            waiting = pause.args[0][0]
            step.summary = f"paused for {redact(str(_kind(waiting.value)), 40)}"
            schema = waiting.response_schema if isinstance(waiting.response_schema, dict) else None  # plain data only
            announced: PipelineReview = {"value": waiting.value, "response_schema": schema}
            return Command(
                update={"messages": [review_message(waiting.value)], "pipeline_review": announced,
                        "trace": traced(state, step.trace())},
                goto=node_name(command_name),
            )
        if not run.ok:  # the pipeline's failure is reported, never a crash
            step.fail("pipeline failed")
        else:
            result = run.value["output"] if route.pauses else run.value
            status, summary = route.read_outcome(result)
            spent, tool_calls = route.read_spent(result)
            step.summary = f"status {status}"
    if not run.ok:
        progress.end("failed", f"/{command_name} failed")
        message = f"The /{command_name} pipeline failed: {run.reason(300)}"
        return {**reply_update(state, message, "failure", {"command": command_name, "status": "failed"}, [], step.trace()),
                "pipeline_review": None}
    verdict = pipeline_verdict(command_name, status)
    progress.end("completed", f"/{command_name}: {status}")
    reply = f"/{command_name} finished with status {status}.\n\n{summary}".strip()
    pipeline: PipelineOutcome = {"command": command_name, "status": status, "summary": redact(summary, REPLY_LIMIT),
                                 "tool_calls": tool_calls}
    # The pipeline's calls are this turn's: its "used" line counts them beside the turn's worst case.
    return {**reply_update(state, reply, verdict, pipeline, [], step.trace()), "pipeline_review": None,
            "contract_metrics": spent}


def _kind(payload: Any) -> str:
    return payload.get("kind", "review") if isinstance(payload, Mapping) else "review"


def make_pipeline_node(command_name: str, route: PipelineRoute, graph: Any) -> Any:
    """The node running ``graph`` for ``/<command_name>`` (sync under invoke, async under ainvoke)."""
    name = node_name(command_name)
    return node(run_pipeline, name, subgraph=held(graph, name) if route.pauses else graph,
                command_name=command_name, route=route)
