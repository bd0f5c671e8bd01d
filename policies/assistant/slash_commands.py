"""Slash commands of the assistant: recognised by rule, never by a model.

``/tasklist docs://versions/<plan>.md`` and ``/delivery-chain <requirement>`` route into the two
pipelines; ``/help`` lists the commands; anything else that looks like a command gets a clear
answer instead of being sent to the model.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from reins.policies.text.redaction import truncate
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, count_word

HELP = "help"
TASKLIST = "tasklist"
DELIVERY_CHAIN = "delivery-chain"

COMMANDS: Mapping[str, tuple[str, str]] = {
    HELP: ("/help", "list the commands"),
    TASKLIST: ("/tasklist docs://versions/<plan>.md", "build a reviewed task list for a version plan"),
    DELIVERY_CHAIN: (
        "/delivery-chain <requirement>",
        f"plan, break down, review ({count_word(len(DEFAULT_REVIEWERS))} reviewers) and report on a requirement",
    ),
}
PIPELINE_COMMANDS = (TASKLIST, DELIVERY_CHAIN)

# "/name" followed by whitespace or the end: "/usr/bin is slow" is chat, not a command.
_COMMAND = re.compile(r"^/(?P<name>[A-Za-z][A-Za-z0-9_\-]*)(?=\s|$)\s*(?P<argument>.*)$", re.S)


@dataclass(frozen=True)
class SlashCommand:
    name: str
    argument: str

    @property
    def known(self) -> bool:
        return self.name in COMMANDS


def parse_slash(text: str) -> SlashCommand | None:
    """The command in ``text`` if it starts with ``/name``; None for ordinary chat."""
    match = _COMMAND.match((text or "").strip())
    if not match:
        return None
    return SlashCommand(match["name"].lower(), match["argument"].strip())


def help_text(tool_lines: Sequence[str] = ()) -> str:
    """The commands, then the chat tools (one help line each, as their declarations give them)."""
    width = max(len(usage) for usage, _ in COMMANDS.values())
    lines = ["Commands:"]
    lines += [f"  {usage.ljust(width)}  {purpose}" for usage, purpose in COMMANDS.values()]
    lines.append("Anything else is ordinary chat" + (", with these tools:" if tool_lines else "."))
    lines += [f"  {line}" for line in tool_lines]
    return "\n".join(lines)


def unknown_command_message(name: str) -> str:
    known = ", ".join(f"/{command}" for command in COMMANDS)
    shown = truncate(name, 40)
    return f"Unknown command /{shown}. Available commands: {known}. Type /help for details."


def usage_problem(command: SlashCommand) -> str | None:
    """A usage message when a pipeline command has no argument at all, else None.

    Whether the argument is acceptable (e.g. exactly one version plan) is the pipeline's own rule.
    """
    if command.name in PIPELINE_COMMANDS and not command.argument:
        return f"Usage: {COMMANDS[command.name][0]}"
    return None


def pipeline_to_run(text: str, available: Collection[str]) -> str | None:
    """The pipeline a message starts, or None: a known pipeline command with an argument whose
    pipeline is installed. Everything else (help, unknown, usage, unavailable) is answered by rule."""
    command = parse_slash(text)
    if command is None or command.name not in PIPELINE_COMMANDS or usage_problem(command):
        return None
    return command.name if command.name in available else None


# Pipeline outcome → the assistant's verdict (success | partial | failure).
_PIPELINE_VERDICTS: Mapping[str, Mapping[str, str]] = {
    TASKLIST: {
        "final": "success",
        "final_with_manual_review_items": "partial",
        "needs_review": "partial",
        "stopped": "partial",
        "blocked": "failure",
        "failed": "failure",
    },
    DELIVERY_CHAIN: {
        "pass": "success",
        "needs_changes": "partial",
        "needs_review": "partial",
        "clarification_required": "partial",
        "blocked": "failure",
        "failed": "failure",
    },
}


def pipeline_verdict(command: str, status: str | None) -> str:
    """Unknown or missing statuses fail closed."""
    return _PIPELINE_VERDICTS.get(command, {}).get(str(status or ""), "failure")
