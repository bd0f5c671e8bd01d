"""User-written rules over the assistant's tool calls: data, validated here, applied by
``reins.policies.tools.data_flow``.

A rule names the tools it covers (shell-style patterns such as ``send_*`` or ``*__delete_*``), one
condition and an effect (``pause``: a person approves the call first; ``refuse``: it never runs):

- ``user_given``: the named arguments must hold values the user wrote (``after_untrusted``: only
  once untrusted content entered the turn);
- ``max_per_turn``: at most ``limit`` calls of these tools per turn;
- ``args_match``: each named argument must match its regular expression in full.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

Name = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[a-z0-9][a-z0-9 _.-]*$")]
Pattern = Annotated[str, Field(min_length=1, max_length=120)]


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    tools: list[Pattern] = Field(min_length=1, max_length=20)
    effect: Literal["pause", "refuse"] = "pause"
    side_effects_only: bool = False  # read-only tools are left out


class UserGivenRule(_Rule):
    kind: Literal["user_given"]
    args: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(min_length=1, max_length=20)
    after_untrusted: bool = True


class MaxPerTurnRule(_Rule):
    kind: Literal["max_per_turn"]
    limit: int = Field(ge=0, le=100)


class ArgsMatchRule(_Rule):
    kind: Literal["args_match"]
    patterns: dict[Annotated[str, Field(min_length=1, max_length=64)], Annotated[str, Field(max_length=300)]] = Field(
        min_length=1, max_length=20)

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: dict[str, str]) -> dict[str, str]:
        for argument, pattern in patterns.items():
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"patterns.{argument} is not a regular expression: {error}") from None
        return patterns


FlowRule = Annotated[Union[UserGivenRule, MaxPerTurnRule, ArgsMatchRule], Field(discriminator="kind")]


class FlowRules(BaseModel):
    """A rule file: ``{"rules": [...]}`` (JSON or YAML)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: list[FlowRule] = Field(default_factory=list, max_length=100)
