"""What the assistant's nodes are built with: models, the chat-scoped tools, the pipelines."""

from __future__ import annotations

import os

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.runtime.execution.calls import OffLoop
from reins.runtime.config.context import resolve_contract_mode, resolve_models
from reins.runtime.llm.models import ModelSet
from reins.runtime.execution.progress import Progress
from reins.runtime.tools.mcp_tools import load_mcp_tools
from reins.runtime.tools.registry import ScopedTools
from reins.runtime.config.settings import TASK_ROLES, VISION_ROLE, Settings

WORKFLOW = "assistant"


def pipeline_context(context: AssistantContext | None) -> dict[str, Any]:
    """The per-run settings every pipeline inherits from the assistant's context."""
    return {"model": getattr(context, "model", None), "contract_mode": getattr(context, "contract_mode", None)}


@dataclass(frozen=True)
class PipelineRoute:
    """How a slash command reaches a pipeline: build it, shape its input, read its outcome.

    ``build(models)`` returns a compiled graph (once, when the assistant is built; ``None`` models
    are resolved per run from the context); ``make_input(argument, text)`` its input;
    ``read_outcome(result)`` returns ``(status, summary)`` from its output; ``make_context``
    derives its run context from the assistant's; ``pauses``: it may pause for a person's review
    (then it runs held, and its question is the chat's last message while it waits);
    ``read_spent(result)``: its model calls per contract and its tool calls, charged to the turn.
    """

    build: Callable[[ModelSet | None], Any]
    make_input: Callable[[str, str], dict[str, Any]]
    read_outcome: Callable[[Mapping[str, Any]], tuple[str, str]]
    make_context: Callable[[AssistantContext | None], dict[str, Any]] = pipeline_context
    pauses: bool = False
    read_spent: Callable[[Mapping[str, Any]], tuple[dict[str, dict[str, int]], int]] = lambda result: ({}, 0)


@dataclass(frozen=True)
class AssistantDeps:
    models: ModelSet | None
    tools: ScopedTools
    pipelines: Mapping[str, PipelineRoute] = field(default_factory=dict)
    mcp_from_env: bool = False  # REINS_MCP_CONFIG, read when a run first needs tools (not at import)

    def tools_for(self, runtime: Runtime[AssistantContext]) -> ScopedTools:
        """The chat tools of this run: the graph's, plus ``REINS_MCP_CONFIG``'s servers (unless the
        graph was given its own) and those the run's context names."""
        tools = self.tools
        for source in (Settings.from_env().mcp_config if self.mcp_from_env else None,
                       getattr(runtime.context, "mcp_config", None)):
            if source:
                extra = load_mcp_tools(source, scope=tools.scope, reserved=tools.names)
                tools = ScopedTools(tools.scope, (*tools.tools, *extra.tools))
        return tools

    def load_tools(self, runtime: Runtime[AssistantContext]) -> Any:
        """``tools_for`` as a node's request (``yield from``): with MCP servers configured, its first
        call in a process reads the configuration and starts them, so under ``ainvoke`` it runs off
        the event loop; without any, the graph's own tools, on the loop."""
        configured = (self.mcp_from_env and os.environ.get("REINS_MCP_CONFIG", "").strip()) or getattr(
            runtime.context, "mcp_config", None)
        if not configured:
            return self.tools
        return (yield OffLoop(self.tools_for, (runtime,)))

    def models_for(self, runtime: Runtime[AssistantContext], state: Mapping[str, Any] | None = None) -> ModelSet:
        """The run's models; for a turn with an image (``state["images"]``), its task roles are
        served as the vision role is (policies.models.vision)."""
        models = resolve_models(runtime.context, self.models)
        if state and state.get("images") and models.has_model(VISION_ROLE):
            return models.routed(tuple(TASK_ROLES), VISION_ROLE)
        return models

    @staticmethod
    def mode_for(runtime: Runtime[AssistantContext]) -> str:
        return resolve_contract_mode(runtime.context)


def thread_id_of(runtime: Runtime[AssistantContext]) -> str | None:
    info = runtime.execution_info
    return info.thread_id if info is not None else None


def progress_for(runtime: Runtime[AssistantContext]) -> Progress:
    return Progress(WORKFLOW, thread_id_of(runtime) or "local")
