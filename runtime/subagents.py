"""The delivery chain's five sub-agent tools (scope ``delivery-chain-manager``).

Sub-agents are ordinary registered tools with a strict argument schema (a short note) and a
``SubagentToolDefinition``: role instruction, input / output artifact kinds, non-goals. They have
no callable here: the manager only *names* a sub-agent; the graph builds the worker's input from
artifacts and runs it, after the delegation policy said yes.
"""

from __future__ import annotations

from policies.delegation import DEFAULT_INPUT_ARTIFACTS, MANAGER, PLAN_TOOL, TASK_TOOL
from runtime.registry import RegisteredTool, SubagentToolDefinition, ToolRegistry
from schemas.delivery import SubagentCallArgs, SubagentToolResult

SCOPE = MANAGER

_COMMON_NON_GOALS = (
    "do not call tools or delegate to other sub-agents",
    "do not ask the user questions",
    "do not read or change real project files, databases or secrets",
    "do not persist artifacts beyond this run",
)

DEFINITIONS: tuple[SubagentToolDefinition, ...] = (
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
    SubagentToolDefinition(
        id="review-subagent",
        role_instruction=(
            "General review: check plan/task alignment, completeness of the breakdown, priorities, and "
            "whether the acceptance criteria cover every requirement clearly."
        ),
        input_artifact_kinds=DEFAULT_INPUT_ARTIFACTS["review-subagent"],
        output_artifact_kind="review",
        non_goals=("do not rewrite the plan or tasks", "do not judge risk or boundaries", *_COMMON_NON_GOALS),
        scopes=(SCOPE,),
    ),
    SubagentToolDefinition(
        id="risk-subagent",
        role_instruction=(
            "Risk review: implementation complexity, security and data handling, unresolved dependencies, "
            "test coverage and maintenance cost; rate the overall severity and suggest mitigations."
        ),
        input_artifact_kinds=DEFAULT_INPUT_ARTIFACTS["risk-subagent"],
        output_artifact_kind="review",
        non_goals=("do not rewrite the plan or tasks", "do not judge governance boundaries", *_COMMON_NON_GOALS),
        scopes=(SCOPE,),
    ),
    SubagentToolDefinition(
        id="boundary-subagent",
        role_instruction=(
            "Boundary review: check the requirement, plan and tasks against the governance boundaries "
            "(artifact persistence, human review and checkpoints, other pipelines, real files) and "
            "report passed, needs_review or blocked with the violations."
        ),
        input_artifact_kinds=DEFAULT_INPUT_ARTIFACTS["boundary-subagent"],
        output_artifact_kind="review",
        non_goals=("do not rewrite the plan or tasks", "do not rate general quality", *_COMMON_NON_GOALS),
        scopes=(SCOPE,),
    ),
)


def _description(definition: SubagentToolDefinition) -> str:
    needs = ", ".join(definition.input_artifact_kinds) or "the requirement only"
    return (
        f"{definition.role_instruction} Needs: {needs}. Produces: {definition.output_artifact_kind}. "
        "Pass at most a short note; the runtime supplies the inputs."
    )


def register(registry: ToolRegistry) -> None:
    """Add the five sub-agent tools to ``registry``, visible only in the manager's scope."""
    for definition in DEFINITIONS:
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
