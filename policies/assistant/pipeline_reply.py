"""What the assistant's chat reply shows of a pipeline run (pure; display only, no decision reads it).

``/tasklist``: the run's summary, its message (a question or a boundary stop), the task list itself
and the manual review items. ``/delivery-chain``: the report's summary, conclusion, blockers and
merged findings. Every part is redacted and cut to its own bound, and the whole to ``BODY_LIMIT``,
so a long task list or report never floods the chat; the full output stays in the run's state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reins.policies.text.redaction import redact, truncate

BODY_LIMIT = 3600
SUMMARY_CHARS = 1200
TASKLIST_CHARS = 2400
SECTION_CHARS = 900
MAX_ITEMS = 5
DELIVERY_SECTIONS = ("Conclusion", "Blockers and high risks", "Merged findings")
NONE_LINES = ("none.", "none", "no findings.", "no blockers or high risks.")


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def markdown_section(markdown: str, title: str) -> str:
    """The body of ``## <title>`` in a rendered report."""
    match = re.search(rf"^##\s+{re.escape(title)}\s*$\n(.*?)(?=^##\s|\Z)", markdown or "", re.M | re.S)
    return match.group(1).strip() if match else ""


def _join(parts: list[str]) -> str:
    return redact("\n\n".join(p for p in parts if p), BODY_LIMIT)


def tasklist_outcome(result: Mapping[str, Any]) -> tuple[str, str]:
    """(final decision, reply body) of a tasklist run."""
    status = str(result.get("final_decision") or "unknown")
    parts = [truncate(_text(result.get("summary")), SUMMARY_CHARS), truncate(_text(result.get("message")), SUMMARY_CHARS)]
    markdown = _text((result.get("artifact") or {}).get("markdown"))
    if markdown:
        parts.append(truncate(markdown, TASKLIST_CHARS))
    items = [i for i in result.get("manual_review_items") or () if isinstance(i, Mapping)]
    if items:
        lines = [f"- {truncate(str(i.get('title', '')), 120)}: {truncate(str(i.get('detail', '')), 200)}" for i in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            lines.append(f"- … and {len(items) - MAX_ITEMS} more")
        parts.append("Manual review items:\n" + "\n".join(lines))
    return status, _join(parts)


def delivery_outcome(result: Mapping[str, Any]) -> tuple[str, str]:
    """(run status, reply body) of a delivery run: summary, conclusion, blockers, findings."""
    status = str(result.get("run_status") or "unknown")
    report = _text(result.get("report"))
    parts = [truncate(markdown_section(report, "Summary") or report, SUMMARY_CHARS)]
    for title in DELIVERY_SECTIONS:
        body = markdown_section(report, title)
        if body and body.lower() not in NONE_LINES:
            parts.append(f"## {title}\n\n{truncate(body, SECTION_CHARS)}")
    return status, _join(parts)


def _per_contract(value: Any) -> dict[str, dict[str, int]]:
    return {str(k): dict(v) for k, v in value.items() if isinstance(v, Mapping)} if isinstance(value, Mapping) else {}


def tasklist_spent(result: Mapping[str, Any]) -> tuple[dict[str, dict[str, int]], int]:
    """What a ``/tasklist`` run spent, for the chat turn's budget: its model calls per contract and
    its tool calls (the one read of its plan)."""
    return _per_contract(result.get("contract_metrics")), 1


def delivery_spent(result: Mapping[str, Any]) -> tuple[dict[str, dict[str, int]], int]:
    """What a ``/delivery-chain`` run spent: its model calls per contract and its delegations."""
    metrics = result.get("metrics") if isinstance(result.get("metrics"), Mapping) else {}
    used = ((metrics.get("budget") or {}).get("used") or {}) if isinstance(metrics.get("budget"), Mapping) else {}
    return _per_contract(metrics.get("per_contract")), int(used.get("tool_calls", 0) or 0)
