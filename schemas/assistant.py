"""Contracts of the assistant: ``assistant.intent``, ``assistant.step``, ``assistant.answer``,
``assistant.reflection``, plus the long-term memory note read back from the store.

Every object rejects unknown fields; strings are trimmed and bounded; lists are bounded.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator

from reins.schemas.rules import Broken, raise_broken, rule_error
from reins.schemas.strict import Strict, bounded_text

MAX_PLAN_STEPS = 10
MAX_TOOL_ARGS_CHARS = 4000


Text = bounded_text  # reads like a type: ``summary: Text(2000)``
# Keys of free-form mappings (a tool call's arguments, a skill's metadata) and pattern-checked names
# are trimmed too: the models that hold them add this to the one ``Strict`` base.
TRIMMED = ConfigDict(str_strip_whitespace=True)


ToolName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")  # the offered-name rule (MCP: <server>__<tool>)
]
Intent = Literal["QA", "SIMPLE_TOOL", "COMPLEX"]
Verdict = Literal["success", "partial", "failure"]


# ------------------------------------------------------------------------------ assistant.intent


class PlanStep(Strict):
    id: int = Field(ge=1, le=MAX_PLAN_STEPS)
    tool: ToolName
    purpose: Text(300)


class AssistantPlan(Strict):
    goal: Text(300)
    steps: list[PlanStep] = Field(min_length=1, max_length=MAX_PLAN_STEPS)

    @model_validator(mode="after")
    def _ordered_unique_ids(self) -> AssistantPlan:
        ids = [step.id for step in self.steps]
        broken = [Broken(("steps", i, "id"), "duplicate_step_id", "plan step ids must be unique")
                  for i, step_id in enumerate(ids) if step_id in ids[:i]]
        if not broken and ids != sorted(ids):
            broken.append(Broken(("steps",), "steps_out_of_order", "plan steps must be listed in id order"))
        raise_broken(type(self).__name__, broken)
        return self


class AssistantIntent(Strict):
    """QA answers without tools, SIMPLE_TOOL makes one call, COMPLEX carries a plan."""

    intent: Intent
    reason: Text(300)
    plan: AssistantPlan | None = None

    @model_validator(mode="after")
    def _plan_only_for_complex(self) -> AssistantIntent:
        if self.intent == "COMPLEX" and self.plan is None:
            raise_broken(type(self).__name__, [Broken(("plan",), "required_for_complex", "a COMPLEX intent needs a plan")])
        if self.intent != "COMPLEX" and self.plan is not None:
            raise_broken(type(self).__name__, [
                Broken(("plan",), "forbidden_unless_complex", "only a COMPLEX intent may carry a plan")])
        return self


# ------------------------------------------------------------------------------ assistant.step


class ToolCall(Strict):
    model_config = TRIMMED
    tool: ToolName
    args: dict[str, Any] = Field(default_factory=dict, max_length=12)
    call_id: Text(120) | None = None

    @field_validator("args")
    @classmethod
    def _bounded_json(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            encoded = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            raise rule_error("args_not_json", "tool arguments must be JSON data") from None
        if len(encoded) > MAX_TOOL_ARGS_CHARS:
            raise rule_error("args_too_long", f"tool arguments are longer than {MAX_TOOL_ARGS_CHARS} characters")
        return value


class AssistantStep(Strict):
    """One tool-calling turn as the runtime reads it: the proposed calls (none = finished)."""

    calls: list[ToolCall] = Field(default_factory=list, max_length=8)
    note: Text(1000, min_length=0) = ""

    @property
    def finished(self) -> bool:
        return not self.calls


# ------------------------------------------------------------------------------ assistant.answer


class AssistantAnswer(Strict):
    summary: Text(2000)
    evidence: list[Text(500)] = Field(default_factory=list, max_length=10)
    verdict: Verdict


# ------------------------------------------------------------------------------ assistant.reflection


class AssistantReflection(Strict):
    went_well: Text(300)
    went_wrong: Text(300)
    next_time: Text(300)
    keywords: list[Text(40)] = Field(min_length=1, max_length=8)

    @field_validator("keywords")
    @classmethod
    def _unique_lower(cls, value: list[str]) -> list[str]:
        lowered = [k.lower() for k in value]
        if len(set(lowered)) != len(lowered):
            raise rule_error("duplicate_keyword", "keywords must be unique")
        return lowered


# ------------------------------------------------------------------------------ memory


class MemoryNote(Strict):
    """A long-term note as stored (and validated again when read back): a reflection after a task,
    or what the user asked the assistant to remember."""

    text: Text(600)
    keywords: list[Text(40)] = Field(default_factory=list, max_length=16)
    kind: Literal["reflection", "remembered"] = "reflection"  # remembered: the user asked for it
    created_at: Text(40)
    verdict: Verdict | None = None  # a reflection's task outcome
    topic: list[Text(40)] = Field(default_factory=list, max_length=8)  # the reflection's own keywords, sorted


# ------------------------------------------------------------------------------ assistant.replan


class AssistantReplan(Strict):
    """A new plan for the work left after a step failed twice in a row (validated like the first plan)."""

    reason: Text(300)
    plan: AssistantPlan


# ------------------------------------------------------------------------------ assistant.summary

MAX_SUMMARY_CHARS = 800


class AssistantSummary(Strict):
    """The rolling summary of the turns that fell out of the conversation window (bounded)."""

    summary: Text(MAX_SUMMARY_CHARS)
