"""What Reins itself adds to trace metadata (LangSmith or any LangChain tracer): an allowlist.

Run ids, the graph, contract and role names, statuses and counts — never prompts, model text,
artifacts or secrets. Anything else offered is dropped; strings are redacted and short.
"""

from __future__ import annotations

from collections.abc import Mapping

from reins.policies.text.redaction import redact

TRACE_METADATA_ALLOWLIST = frozenset(
    {
        "reins_graph",
        "reins_run_id",
        "reins_thread_id",
        "reins_contract",
        "reins_role",
        "reins_model",  # the label of the model a call went to (a model name, never a key or URL)
        "reins_inputs",  # an opaque handle of a contract call's inputs (never the inputs themselves)
        "reins_reply",  # marks a streamed reply's text run
        "reins_status",
        "reins_step",
        "reins_call_count",
        "reins_repair_count",
    }
)
_VALUE_LIMIT = 120


def allowlisted_metadata(metadata: Mapping[str, object]) -> dict[str, object]:
    """Keep only allowlisted keys with scalar values; strings redacted and cut short."""
    kept: dict[str, object] = {}
    for key, value in metadata.items():
        if key not in TRACE_METADATA_ALLOWLIST:
            continue
        if isinstance(value, bool) or isinstance(value, (int, float)):
            kept[key] = value
        elif isinstance(value, str):
            kept[key] = redact(value, _VALUE_LIMIT)
    return kept
