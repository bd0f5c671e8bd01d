"""Reins' guardrails as pure functions, one package per concern, mirroring ``nodes/`` and ``runtime/``.

- ``delivery``: the delivery chain's delegation, reviewers, status matrix, revision and report.
- ``tasklist``: the tasklist agent's state machine, readiness, structure and review.
- ``tools``: what happens to a proposed tool call (approvals, data flow, egress, loop guards …).
- ``assistant``: the assistant's turn beyond its tools (answer check, memory, skills …).
- ``models``: how a model is called and its answer handled (fallbacks, retries, re-asks …).
- ``audit``: replay, guard coverage and worst-case budgets.
- ``text``: redaction, truncation, JSON limits and terminal-safe text.
- ``verdict``: the one answer shape of every policy that allows or refuses.

Nothing here does I/O, calls a model or imports LangGraph; nodes and the runtime call these functions
and turn their answers into state.
"""
