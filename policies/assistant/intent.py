"""The request's intent when the user names a tool: a request that asks for a listed tool by its name
("use the calculator", "with notes__add_note") is a tool request, whatever the model classified.

Small models answer "use the calculator: what is (17+25)*3?" from their own arithmetic and call it QA;
the user asked for the tool, so the runtime keeps the step that calls it. The call itself still goes
through every tool rule (approval, data flow, limits): naming a tool never lets a call skip a gate.
Only QA is raised; a tool or a plan the model chose is never lowered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# A tool is asked for when its name follows one of these words (the name as listed, or with its
# underscores read as spaces, "add note" for add_note; an MCP tool's server prefix may be left out).
_ASKING = r"(?:use|using|with|call|run|via|through)\s+(?:the\s+|a\s+|an\s+|my\s+)?"


def _spellings(name: str) -> set[str]:
    short = name.split("__", 1)[1] if "__" in name else name
    return {name.lower(), short.lower(), short.replace("_", " ").lower()}


def named_tool(request: str, tool_names: Sequence[str]) -> str | None:
    """The first listed tool the request asks for by name, or None."""
    text = " ".join(request.lower().split())
    for name in tool_names:
        for spelling in sorted(_spellings(name), key=len, reverse=True):
            if re.search(_ASKING + re.escape(spelling) + r"(?![\w])", text):
                return name
    return None


def settled_intent(model_intent: str, request: str, tool_names: Sequence[str]) -> tuple[str, str | None]:
    """``(intent, reason)``: the model's intent, or SIMPLE_TOOL with the reason when it said QA for a
    request that names a tool."""
    if model_intent != "QA":
        return model_intent, None
    tool = named_tool(request, tool_names)
    if tool is None:
        return model_intent, None
    return "SIMPLE_TOOL", f"the request asks for the tool {tool}"
