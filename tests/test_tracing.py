"""What a traced run would send: Reins' own metadata is an allowlist, never prompts, model text or secrets.

A LangChain tracer (what LangSmith uses when LANGSMITH_TRACING is set) records every run of a
delivery-chain execution whose requirement carries planted secrets.
"""

from __future__ import annotations

from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run

from reins.graphs.delivery_chain import build_graph
from reins.policies.audit.tracing import TRACE_METADATA_ALLOWLIST
from reins.runtime.config.tracing import run_config

SECRETS = ("sk-live-planted0123456789", "Bearer planted.token.value", "/home/alice/.ssh/id_rsa")
REQUIREMENT = (
    "Show a banner when a user reaches the request limit. Use api key "
    f"{SECRETS[0]} and header Authorization: {SECRETS[1]}; config lives in {SECRETS[2]}."
)


class RecordingTracer(BaseTracer):
    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        pass

    def _end_trace(self, run: Run) -> None:
        super()._end_trace(run)
        self.runs.append(run)

    def all_runs(self) -> list[Run]:
        seen, stack = [], list(self.runs)
        while stack:
            run = stack.pop()
            seen.append(run)
            stack.extend(run.child_runs)
        return seen


def test_reins_trace_metadata_is_allowlisted_and_secret_free():
    tracer = RecordingTracer()
    config = run_config("delivery_chain", thread_id="trace-1", prompt=REQUIREMENT)
    config["callbacks"] = [tracer]
    result = build_graph().invoke({"requirement": REQUIREMENT}, config)
    assert result["run_status"] in {"pass", "needs_review", "needs_changes", "blocked"}

    runs = tracer.all_runs()
    assert len(runs) > 10
    contract_runs = [run for run in runs if run.extra.get("metadata", {}).get("reins_contract")]
    assert {run.extra["metadata"]["reins_contract"] for run in contract_runs} >= {"delivery.plan", "delivery.risk_review"}
    for run in runs:
        metadata = run.extra.get("metadata", {})
        ours = {key for key in metadata if key.startswith("reins_")}
        assert ours <= TRACE_METADATA_ALLOWLIST, ours - TRACE_METADATA_ALLOWLIST
        assert metadata.get("reins_graph") == "delivery_chain"
        flat = repr(metadata)
        assert not any(secret in flat for secret in SECRETS)
        assert "Show a banner" not in flat, "no prompt or requirement text in metadata"
