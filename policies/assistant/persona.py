"""How much of the user's own instructions and few-shot examples the assistant's prompts carry.

The persona is the user's text: it shapes how the assistant writes, never what runs. These caps keep
it from crowding out the request, the tools and the rules; a persona over them is refused whole
(with the first cap it breaks), never cut, so what the prompt carries is what the user wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_INSTRUCTIONS_CHARS = 2000
MAX_EXAMPLES = 5
MAX_EXAMPLE_REQUEST_CHARS = 500
MAX_EXAMPLE_ANSWER_CHARS = 1000


def persona_problem(instructions: str, examples: Sequence[tuple[str, str]]) -> str | None:
    """The first cap the persona breaks, as ``<where>: <what>``; None when it fits."""
    if len(instructions) > MAX_INSTRUCTIONS_CHARS:
        return f"instructions: {len(instructions)} characters, at most {MAX_INSTRUCTIONS_CHARS}"
    if len(examples) > MAX_EXAMPLES:
        return f"examples: {len(examples)} given, at most {MAX_EXAMPLES}"
    for index, (request, answer) in enumerate(examples):
        if len(request) > MAX_EXAMPLE_REQUEST_CHARS:
            return f"examples.{index}.request: {len(request)} characters, at most {MAX_EXAMPLE_REQUEST_CHARS}"
        if len(answer) > MAX_EXAMPLE_ANSWER_CHARS:
            return f"examples.{index}.answer: {len(answer)} characters, at most {MAX_EXAMPLE_ANSWER_CHARS}"
    return None
