import pytest

from reins.policies.audit.tracing import TRACE_METADATA_ALLOWLIST, allowlisted_metadata
from reins.runtime.config.tracing import run_config


@pytest.mark.parametrize(
    ("offered", "kept"),
    [
        ({"reins_graph": "delivery_chain"}, {"reins_graph": "delivery_chain"}),
        ({"reins_call_count": 7, "reins_repair_count": 0}, {"reins_call_count": 7, "reins_repair_count": 0}),
        ({"prompt": "You are a planner..."}, {}),
        ({"requirement": "secret plan"}, {}),
        ({"reins_status": "pass", "model_output": "{...}"}, {"reins_status": "pass"}),
        ({"reins_contract": "delivery.plan sk-abcdefghijklmnop"}, {"reins_contract": "delivery.plan [redacted]"}),
        ({"reins_graph": {"nested": "dict"}}, {}),
        ({"reins_step": ["list"]}, {}),
        ({"reins_graph": "x" * 500}, {"reins_graph": "x" * 119 + "…"}),
    ],
)
def test_only_allowlisted_scalar_metadata_survives(offered, kept):
    assert allowlisted_metadata(offered) == kept


def test_run_config_carries_thread_and_only_allowlisted_keys():
    config = run_config("tasklist_agent", thread_id="t-1", status="final", prompt="never")
    assert config["configurable"] == {"thread_id": "t-1"}
    assert set(config["metadata"]) <= TRACE_METADATA_ALLOWLIST
    assert config["metadata"]["reins_status"] == "final"
    assert "never" not in str(config)
