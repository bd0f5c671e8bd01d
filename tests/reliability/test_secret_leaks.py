"""Acceptance: a secret of no known shape, echoed by the model and by a provider's error, or typed
into a requirement, is found in no output, no file and no checkpoint byte of a real CLI run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.wire.behaviours import ANSWERS, cooperative, schema_name
from tests.wire.provider_stub import Completion, HttpError, StubProvider

API_KEY = "plainvalue123456"  # no shape any pattern knows
TYPED = "typedsecret-9f8e7d"  # a secret the user types into a requirement, by shape (password=…)
REQUIREMENT = (
    "Show a banner when a user hits the request limit. The banner links to the pricing page. "
    f"Use password={TYPED} for the staging account."
)


def echoing(body: dict[str, Any]) -> Any:
    """Cooperative, but the plan echoes the key and the risk reviewer fails with it in the error."""
    name = schema_name(body)
    if name == "RiskReview":
        return HttpError(400, f"Invalid request for key {API_KEY}", "invalid_request_error")
    if name == "DeliveryPlan":
        plan = dict(ANSWERS[name], summary=f"Plan (the key is {API_KEY}): 4 requirement(s) in 6 phases.")
        return Completion(content=json.dumps(plan))
    return cooperative(body)


def reins(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reins.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_no_secret_leaves_a_cli_run(tmp_path, json_flag):
    with StubProvider(echoing) as provider:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))},
            "OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": provider.base_url, "REINS_MODEL": "stub-model",
            "REINS_CHECKPOINT": "sqlite", "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            "REINS_HOME": str(tmp_path / "reins-home"),  # the run's files under the directory searched below
        }
        done = reins(tmp_path, env, "deliver", REQUIREMENT, *json_flag)
        bodies = json.dumps(provider.bodies())
    assert done.returncode in (1, 4), done.stderr  # the risk review failed: never a pass
    # The model echoed the key (so the test can fail), yet no model ever saw the typed secret.
    assert "RiskReview" in bodies and TYPED not in bodies
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.suffix == ".db" for path in files)  # the SQLite checkpoints were written
    for secret in (API_KEY, TYPED):
        assert secret not in done.stdout and secret not in done.stderr
        for path in files:
            assert secret.encode() not in path.read_bytes(), path
    report = json.loads(done.stdout)["report"] if json_flag else done.stdout
    assert "[redacted]" in report and "A secret in the requirement was replaced" in report


@pytest.mark.parametrize("graph_name", ["delivery_chain", "tasklist_agent", "assistant"])
def test_typed_secrets_are_redacted_before_state_and_said_so(graph_name):
    """Through the Python API: the raw text is in no checkpoint, and the run says it was redacted."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from reins.runtime.standins.offline import OfflineModel

    module = __import__(f"graphs.{graph_name}", fromlist=["build_graph"])
    saver = InMemorySaver()
    graph = module.build_graph(models=OfflineModel(), checkpointer=saver)
    secret = f"password={TYPED}"
    inputs = {
        "delivery_chain": {"requirement": REQUIREMENT},
        "tasklist_agent": {"request": f"/tasklist docs://versions/v0.2.0-ready.md {secret}"},
        "assistant": {"messages": [HumanMessage(content=f"what is 2+2? {secret}")]},
    }[graph_name]
    config = {"configurable": {"thread_id": graph_name}}
    streamed = list(graph.stream(inputs, config, stream_mode="values"))
    history = list(graph.get_state_history(config))
    assert streamed and history
    assert TYPED not in repr(streamed) + repr(history) + repr(list(saver.list(None)))
    final = graph.get_state(config).values
    said = {
        "delivery_chain": lambda: "A secret in the requirement was replaced" in final["report"],
        "tasklist_agent": lambda: "Secret redacted from the request" in [i["title"] for i in final["manual_review_items"]],
        "assistant": lambda: "a secret in the message was redacted" in final["trace"][0]["summary"],
    }[graph_name]
    assert said()
