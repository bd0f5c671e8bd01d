"""How a tool call is asked for, in a form the configured provider honours (pure).

``REINS_TOOL_CHOICE`` picks one of three styles, for the manager's turns and for
``function_calling`` structured output alike:

========  =======================================================================================
style     request
========  =======================================================================================
required  ``tool_choice: "required"`` — a string every server that supports forcing accepts
          (OpenAI, DeepSeek, vLLM, llama.cpp ``--jinja``); servers without forcing ignore it
named     the single allowed tool by name (``{"type": "function", "function": {"name": …}}``)
          where exactly one tool is offered, else ``"required"``; llama.cpp and some local
          servers accept only strings and silently fall back to ``auto``
auto      ``tool_choice: "auto"``: the model may answer in text (the delegation policy then
          refuses the turn as ``no_tool_call``)
========  =======================================================================================

``parallel_tool_calls`` is true only when several tools must be called in one turn (the review
group); a single-tool phase asks for one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

ToolChoiceStyle = Literal["required", "named", "auto"]  # most forcing first
TOOL_CHOICE_STYLES: tuple[str, ...] = get_args(ToolChoiceStyle)


def _check(style: str) -> None:
    if style not in TOOL_CHOICE_STYLES:
        raise ValueError(f"tool choice style {style!r} is not one of {', '.join(TOOL_CHOICE_STYLES)}")


def tool_turn_options(offered: Sequence[str], style: str, *, parallel: bool) -> dict[str, Any]:
    """The ``bind_tools`` options for one tool-calling turn offering ``offered`` tools.

    ``tool_choice`` is a string (langchain turns a tool's name into the named form);
    ``parallel`` says whether the turn must call several tools at once.
    """
    _check(style)
    if not offered:
        raise ValueError("a tool-calling turn must offer at least one tool")
    if style == "named" and len(offered) == 1:
        choice = offered[0]
    elif style == "auto":
        choice = "auto"
    else:
        choice = "required"
    return {"tool_choice": choice, "parallel_tool_calls": bool(parallel and len(offered) > 1)}


def structured_tool_choice(style: str) -> str | None:
    """``tool_choice`` for ``function_calling`` structured output; None keeps the named default."""
    _check(style)
    return None if style == "named" else style
