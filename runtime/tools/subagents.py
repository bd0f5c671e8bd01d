"""The delivery chain's sub-agent tools (scope ``delivery-chain-manager``): the plan and task
workers, and one reviewer per row of the reviewer table (``policies/delivery/reviewers.py``).

Sub-agents are ordinary registered tools with a strict argument schema (a short note) and a
``SubagentToolDefinition``: role instruction, input / output artifact kinds, non-goals. They have
no callable here: the manager only *names* a sub-agent; the graph builds the worker's input from
artifacts and runs it, after the delegation policy said yes.
"""

from __future__ import annotations

from reins.policies.delivery.delegation import DEFAULT_INPUT_ARTIFACTS, MANAGER, PLAN_TOOL, REVIEW_INPUTS, TASK_TOOL
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers, ReviewerSpec
from reins.runtime.tools.registry import RegisteredTool, SubagentToolDefinition, ToolRegistry
from reins.schemas.delivery import SubagentCallArgs, SubagentToolResult

SCOPE = MANAGER

_COMMON_NON_GOALS = (
    "do not call tools or delegate to other sub-agents",
    "do not ask the user questions",
    "do not read or change real project files, databases or secrets",
    "do not persist artifacts beyond this run",
)

WORKER_DEFINITIONS: tuple[SubagentToolDefinition, ...] = (
    SubagentToolDefinition(
        id=PLAN_TOOL,
        role_instruction=(
            "Understand the requirement and write an implementation plan: scope, assumptions, delivery "
            "phases with acyclic dependencies, and acceptance criteria that cover every requirement."
        ),
        input_artifact_kinds=DEFAULT_INPUT_ARTIFACTS[PLAN_TOOL],
        output_artifact_kind="plan",
        non_goals=("do not break the plan into tasks", "do not review the plan", *_COMMON_NON_GOALS),
        scopes=(SCOPE,),
    ),
    SubagentToolDefinition(
        id=TASK_TOOL,
        role_instruction=(
            "Break the plan into concrete tasks, each with a target area, acceptance criteria, the "
            "requirements it serves and acyclic dependencies on earlier tasks."
        ),
        input_artifact_kinds=DEFAULT_INPUT_ARTIFACTS[TASK_TOOL],
        output_artifact_kind="tasks",
        non_goals=("do not change the plan's scope", "do not review the tasks", *_COMMON_NON_GOALS),
        scopes=(SCOPE,),
    ),
)


def _description(definition: SubagentToolDefinition) -> str:
    needs = ", ".join(definition.input_artifact_kinds) or "the requirement only"
    return (
        f"{definition.role_instruction} Needs: {needs}. Produces: {definition.output_artifact_kind}. "
        "Pass at most a short note; the runtime supplies the inputs."
    )


def reviewer_definition(spec: ReviewerSpec) -> SubagentToolDefinition:
    """A reviewer's sub-agent, from its spec: its prompt, what it reads, what it must not do."""
    return SubagentToolDefinition(
        id=spec.tool,
        role_instruction=spec.instruction,
        input_artifact_kinds=REVIEW_INPUTS,
        output_artifact_kind="review",
        non_goals=(*spec.non_goals, *_COMMON_NON_GOALS),
        scopes=(SCOPE,),
    )


def definitions(reviewers: Reviewers = DEFAULT_REVIEWERS) -> tuple[SubagentToolDefinition, ...]:
    return (*WORKER_DEFINITIONS, *(reviewer_definition(spec) for spec in reviewers))


def register(registry: ToolRegistry, reviewers: Reviewers = DEFAULT_REVIEWERS) -> None:
    """Add the sub-agent tools (plan, tasks, one per reviewer) to ``registry``, visible only in the
    manager's scope."""
    for definition in definitions(reviewers):
        registry.register(
            RegisteredTool(
                name=definition.id,
                description=_description(definition),
                args_schema=SubagentCallArgs,
                scopes=frozenset(definition.scopes),
                result_schema=SubagentToolResult,
                subagent=definition,
            )
        )
