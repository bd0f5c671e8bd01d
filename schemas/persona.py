"""The shape of the user's persona for the assistant: instructions and few-shot examples, from the
run's context or the file named by ``REINS_ASSISTANT_PROMPT_FILE``. Unknown keys and wrong types are
refused (a misspelt key must not be ignored silently); the length caps are ``reins.policies.assistant.persona``'s."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from reins.schemas.strict import Strict

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class PersonaExample(Strict):
    """One few-shot example: a request and the answer the user wants for it."""

    request: _Text
    answer: _Text


class AssistantPersona(Strict):
    instructions: Annotated[str, StringConstraints(strip_whitespace=True)] = ""
    examples: list[PersonaExample] = Field(default_factory=list)
