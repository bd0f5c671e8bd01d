"""Whether a tool call runs unasked (pure): one approval trait per tool, derived once from what its
declaration says, read by the executor, the batching rule, ``/help`` and ``reins doctor``.

- ``run``: runs at once — it changes nothing, or the user trusts it to act unasked.
- ``ask``: pauses for a person's approval *before* it runs (every side effect by default).
- ``question``: the call *is* a question to the user (``ask_user``); the graph answers it.

An MCP server is untrusted: its annotations (``readOnlyHint``) are hints the user may choose to
believe for that server (``trust_annotations``), and its tools named in the server's ``trust`` list
run unasked; every other MCP tool asks first, whatever the server claims.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

Approval = Literal["run", "ask", "question"]
APPROVALS: tuple[Approval, ...] = ("run", "ask", "question")
# How /help and `reins doctor` mark a tool: nothing for one that runs unasked.
APPROVAL_NOTES: Mapping[Approval, str] = {"run": "", "ask": "asks first", "question": "asks you"}


def approval_for(*, read_only: bool, trusted: bool = False, asks_user: bool = False) -> Approval:
    """A tool's trait from its declaration: a question, else run when it changes nothing or the
    user trusts it, else ask."""
    if asks_user:
        return "question"
    return "run" if read_only or trusted else "ask"


def hint_read_only(annotations: Mapping[str, Any] | None) -> bool:
    """A server's claim that its tool changes nothing: only an explicit ``readOnlyHint: true``."""
    return bool(annotations) and annotations.get("readOnlyHint") is True


def mcp_read_only(annotations: Mapping[str, Any] | None, *, trust_annotations: bool) -> bool:
    """Whether Reins treats an MCP tool as read-only: the server's hint, only when the user
    believes that server's annotations."""
    return trust_annotations and hint_read_only(annotations)


def mcp_approval(tool: str, annotations: Mapping[str, Any] | None, *, trust: Collection[str] = (),
                 trust_annotations: bool = False) -> Approval:
    """An MCP tool's trait: run only when the user trusts it by name or believes the server's
    read-only hint; every other tool asks first."""
    return approval_for(read_only=mcp_read_only(annotations, trust_annotations=trust_annotations),
                        trusted=tool in trust)


def approval_note(approval: Approval) -> str:
    """The parenthesised mark after a tool's name ("" when it runs unasked)."""
    note = APPROVAL_NOTES[approval]
    return f" ({note})" if note else ""
