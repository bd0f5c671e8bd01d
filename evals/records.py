"""The evaluation's per-run records of decisions: what each controlled-chain run's policies were
given (the manager's proposals, the refusals, the reviewers' outcomes, the bundle's findings, the
contract outputs the runtime accepted) and what they decided, kept so ``reins replay --eval`` can
re-decide every run under a changed policy without a model.

``reins eval`` writes them to ``records.json`` beside ``report.md``; a record is compact (no
markdown, no call ids, no summaries the decisions do not read; a contract output's long strings
kept as their length and digest, ``reins.policies.audit.contract_replay.elided``), and a contract output that
several runs share (the same plan of the same scenario) is kept once, in the document's ``outputs``
table, and named by its position there: about 2 KB a run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reins.nodes.delivery.replay import replay_values
from reins.nodes.delivery.replay_contracts import contract_outputs
from reins.policies.audit.replay import DEFAULT_OVERRIDES, Overrides, Replay
from reins.runtime.config.files import FileRefused, read_bounded_text

RECORDS_FILE = "records.json"
RECORDS_VERSION = 2
RECORDS_OPTION = "reins replay --eval"  # how the user names the file, in its refusals
MAX_RECORDS_BYTES = 256 * 1024 * 1024  # about 2 KB a run
READABLE_VERSIONS = (1, 2)  # version 1 kept no contract outputs: its runs replay without them


def decision_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a delivery run's final state that its decisions read (``reins.nodes.delivery.replay``)."""
    proposals = [{**{k: p[k] for k in ("turn", "executed", "artifacts", "cut_off", "verdict")},
                  "calls": [{"name": c["name"], "args": c.get("args") or {}} for c in p["calls"]]}
                 for p in values.get("manager_proposals") or []]
    refusals = [{k: r[k] for k in ("turn", "executed", "code", "reasked", "escalated") if k in r}
                for r in values.get("manager_refusals") or []]
    outcomes = [{"role": o["role"], "tool": o.get("tool"), "outcome": o["outcome"],
                 "review": {k: v for k, v in o["review"].items() if k != "markdown"} if o.get("review") else None}
                for o in values.get("review_outcomes") or []]
    bundle = values.get("review_bundle")
    decision = values.get("post_review_decision")
    return {
        "manager_proposals": proposals,
        "manager_refusals": refusals,
        "review_outcomes": outcomes if values.get("review_outcomes") is not None else None,
        "review_bundle": {"status": bundle["status"], "findings": bundle["findings"]} if bundle else None,
        "post_review_decision": ({"action": decision["action"], "revision_targets": decision["revision_targets"]}
                                 if decision else None),
        "run_status": values.get("run_status"),
        "contract_outputs": contract_outputs(values, compact=True),
    }


def run_id(record: Mapping[str, Any]) -> str:
    """A record's id: ``<baseline>/<scenario>/r<repeat>@<rate>``, unique within an evaluation."""
    return f"{record['baseline']}/{record['scenario']}/r{record['repeat']}@{record['rate']:g}"


def records_document(runs: Iterable[Any]) -> dict[str, Any]:
    """Every run with recorded decisions, from one or several ``EvaluationResults``."""
    entries, outputs, known = [], [], {}
    for results in runs:
        for record in results.records:
            if record.decisions is None:  # a baseline without Reins' policies decides nothing to replay
                continue
            entry = {"baseline": record.baseline, "scenario": record.scenario, "repeat": record.repeat,
                     "rate": record.rate, "seed": results.settings.get("seed", 0), "status": record.status,
                     "decisions": {**record.decisions, "contract_outputs": [
                         _shared(output, outputs, known) for output in record.decisions.get("contract_outputs") or []]}}
            entries.append({"id": run_id(entry), **entry})
    return {"version": RECORDS_VERSION, "outputs": outputs, "records": entries}


def _shared(output: Mapping[str, Any], outputs: list[Any], known: dict[str, int]) -> dict[str, Any]:
    """``output`` with its value replaced by its position in ``outputs`` (added there when new)."""
    key = json.dumps(output["value"], sort_keys=True, separators=(",", ":"))
    if key not in known:
        known[key] = len(outputs)
        outputs.append(output["value"])
    return {**{k: v for k, v in output.items() if k != "value"}, "value_at": known[key]}


def write_records(runs: Sequence[Any], out_dir: Path) -> Path:
    path = out_dir / RECORDS_FILE
    path.write_text(json.dumps(records_document(runs), separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def load_records(path: Path) -> list[dict[str, Any]]:
    """The records of ``path`` (a records.json, or the directory holding one); ValueError, one line
    naming the file and the field, when it is not one."""
    path = path / RECORDS_FILE if path.is_dir() else path
    origin = f"{RECORDS_OPTION}: {path.name}"
    try:
        document = json.loads(read_bounded_text(path, variable=RECORDS_OPTION, limit=MAX_RECORDS_BYTES))
    except FileRefused as error:
        if str(error).endswith(": no such file"):
            raise ValueError(f"no {RECORDS_FILE} at {path} (run reins eval first)") from None
        raise ValueError(str(error)) from None
    except ValueError:
        raise ValueError(f"{origin}: not a records file (not JSON)") from None
    records = document.get("records") if isinstance(document, dict) else None
    readable = isinstance(document, dict) and document.get("version") in READABLE_VERSIONS
    if not readable or not isinstance(records, list) or not all(
        isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("decisions"), dict) for r in records
    ):
        raise ValueError(f"{origin}: not a records file of version {' or '.join(map(str, READABLE_VERSIONS))}")
    outputs = document.get("outputs") or []
    if not isinstance(outputs, list):
        raise ValueError(f"{origin}: outputs: not a list")
    for record in records:
        named = record["decisions"].get("contract_outputs") or []
        if not isinstance(named, list) or not all(isinstance(output, dict) for output in named):
            raise ValueError(f"{origin}: record {record['id'][:80]!r}: contract_outputs: not a list of objects")
        for index, output in enumerate(named):
            at = output.get("value_at")
            if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at < len(outputs):
                raise ValueError(f"{origin}: record {record['id'][:80]!r}: contract_outputs.{index}.value_at: "
                                 f"names a contract output the file does not hold (0 to {len(outputs) - 1})")
        record["decisions"]["contract_outputs"] = [
            {**{k: v for k, v in output.items() if k != "value_at"}, "value": outputs[output["value_at"]]}
            for output in named]
    return records


def replay_records(records: Iterable[Mapping[str, Any]], overrides: Overrides = DEFAULT_OVERRIDES) -> list[Replay]:
    """Each record re-decided (``reins.nodes.delivery.replay.replay_values``) under ``overrides``."""
    return [replay_values(r["decisions"], r["id"], overrides=overrides) for r in records]
