"""Per-run configuration of the assistant (LangGraph runtime context)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reins.runtime.tools.mcp_config import parse_config
from reins.policies.assistant.memory import DEFAULT_SCOPE, SCOPES, MemoryScope
from reins.runtime.config.context import ReinsContext, model_field
from reins.runtime.tools.flow_rules import parse_rules
from reins.nodes.assistant.state import PersonaExample
from reins.runtime.config.persona import parse_persona



@dataclass(kw_only=True)
class AssistantContext(ReinsContext):
    """The assistant's per-run settings (LangGraph's ``context=``; Studio shows them as a form): user id,
    memory scope, MCP servers, skills, data-flow rules, persona.

    Example: ``build_assistant().invoke(inputs, config, context=AssistantContext(user_id="ada", memory_scope="user"))``
    """

    model: str | None = model_field("classify_intent", "propose_step", "reflect", "draft_answer", "tasklist",
                                    "delivery_chain")
    user_id: str = field(default="local", metadata={"description": "Whose long-term notes to read and write."})
    memory_scope: MemoryScope = field(
        default=DEFAULT_SCOPE,
        metadata={"description": "user: notes shared by the user's threads (recalled in a new session); "
                                 "thread: notes stay in this conversation."},
    )
    skills_root: str | None = field(
        default=None,
        metadata={"description": "A folder of your own skills (SKILL.md folders); defaults to REINS_SKILLS_ROOT."},
    )
    human_review: bool = field(
        default=False,
        metadata={"description": "Pause /tasklist runs for a person at their review points; resume on this thread."},
    )
    review_skill_drafts: bool = field(
        default=False,
        metadata={"description": "Offer a skill draft for approval after repeated successes on a topic "
                                 "(a pause; human_review offers them too). reins chat sets it."},
    )

    mcp_config: dict[str, Any] | None = field(
        default=None,
        metadata={"description": 'This run\'s own MCP servers: {"mcpServers": {"<name>": {...}}} (chat tools only).'},
    )

    flow_rules: dict[str, Any] | None = field(
        default=None,
        metadata={"description": 'This run\'s data-flow rules {"rules": [...]}, replacing the defaults (docs: '
                                 '"Prompt injection").'},
    )

    instructions: str | None = field(
        default=None,
        metadata={"description": "Your instructions for the assistant (persona, tone, what to prefer), added to its "
                                 "prompts after its rules; they change no rule. Unset: REINS_ASSISTANT_PROMPT_FILE's."},
    )
    examples: list[PersonaExample] | None = field(
        default=None,
        metadata={"description": "Few-shot examples [{request, answer}] of how you want answers written. "
                                 "Unset: REINS_ASSISTANT_PROMPT_FILE's."},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.instructions is not None or self.examples is not None:  # PersonaError (a ValueError) names the field
            parse_persona({"instructions": self.instructions or "", "examples": list(self.examples or [])})
        if self.flow_rules is not None:
            parse_rules(self.flow_rules)  # FlowRulesError (a ValueError) names the rule and field
        if self.mcp_config is not None:
            parse_config(self.mcp_config)  # McpConfigError (a ValueError) names what is wrong
        if self.memory_scope not in SCOPES:
            raise ValueError(f"memory_scope must be one of {', '.join(SCOPES)}")
        if not self.user_id or not self.user_id.strip():
            raise ValueError("user_id must not be empty")
