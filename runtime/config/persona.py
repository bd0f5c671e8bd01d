"""The user's persona for the assistant: instructions and few-shot examples from the run's context,
else from the file named by ``REINS_ASSISTANT_PROMPT_FILE`` (TOML, or JSON by its ``.json`` suffix).

A persona is checked whole (``reins.schemas.persona`` for its shape, ``reins.policies.assistant.persona`` for its caps) and
refused in one line naming the field; it reaches the prompts as the user's text and no rule reads it.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reins.policies.assistant.persona import persona_problem
from reins.runtime.config.files import FileRefused, read_bounded_text
from reins.schemas.persona import AssistantPersona

PROMPT_FILE_ENV = "REINS_ASSISTANT_PROMPT_FILE"
MAX_PERSONA_BYTES = 256 * 1024  # far above what the persona's caps let through


class PersonaError(ValueError):
    """A persona (context or file) that does not fit its schema or caps."""


def parse_persona(document: Any, origin: str = "persona") -> dict[str, Any]:
    """The persona as plain data ``{instructions, examples: [{request, answer}]}``, or PersonaError."""
    try:
        persona = AssistantPersona.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first.get("loc", ()))) or "$"
        raise PersonaError(f"{origin}: {where}: {first.get('msg', 'invalid')}") from None
    problem = persona_problem(persona.instructions, [(e.request, e.answer) for e in persona.examples])
    if problem:
        raise PersonaError(f"{origin}: {problem}")
    return persona.model_dump()


def read_persona_file(path: str | Path) -> dict[str, Any]:
    source = Path(path)
    try:
        text = read_bounded_text(source, variable=PROMPT_FILE_ENV, limit=MAX_PERSONA_BYTES)
    except FileRefused as error:
        raise PersonaError(str(error)) from None
    origin = f"{PROMPT_FILE_ENV}: {source.name}"
    try:
        document = json.loads(text) if source.suffix.lower() == ".json" else tomllib.loads(text)
    except ValueError as error:  # tomllib.TOMLDecodeError and JSONDecodeError are ValueErrors
        raise PersonaError(f"{origin}: cannot be read as a persona file ({type(error).__name__})") from None
    return parse_persona(document, origin)


def persona_file() -> str:
    """The persona file ``REINS_ASSISTANT_PROMPT_FILE`` names, or "" when none is configured."""
    return os.environ.get(PROMPT_FILE_ENV, "").strip()


def persona_in_force(instructions: str | None, examples: Sequence[Mapping[str, Any]] | None,
                     path: str | None = None) -> dict[str, Any]:
    """The run's persona: each of the context's fields that is given, else the file's (``path``, default
    ``REINS_ASSISTANT_PROMPT_FILE`` read now), else none. Reads a file: call it off the event loop."""
    path = path if path is not None else persona_file()
    base = read_persona_file(path) if path else {"instructions": "", "examples": []}
    document = {"instructions": base["instructions"] if instructions is None else instructions,
                "examples": base["examples"] if examples is None else [dict(e) for e in examples]}
    return parse_persona(document, "persona")


def context_persona(context: Any, path: str | None = None) -> dict[str, Any]:
    """``persona_in_force`` for a run's context (the assistant's ``instructions`` and ``examples``)."""
    return persona_in_force(getattr(context, "instructions", None), getattr(context, "examples", None), path)
