"""``reins runs`` on a delivery run interrupted mid-review under the CLI's exit-only durability."""

from __future__ import annotations

import json
import threading
import time

import pytest

from reins.cli import main


@pytest.fixture
def sqlite_env(monkeypatch, tmp_path, reins_home):
    for name in ("REINS_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    monkeypatch.chdir(tmp_path)
    return reins_home / "checkpoints.db"


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_an_interrupted_delivery_run_lists_as_incomplete_and_resumable(sqlite_env, capsys):
    from delivery_builders import general, risk, script

    from reins.graphs.delivery_chain import build_graph
    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.runtime.llm.models import ModelSet
    from reins.runtime.standins.scripted import ScriptedModel

    # The boundary review dies only after the other two reviews have answered (and had a moment to
    # finish), so which reviews were saved does not depend on thread scheduling.
    answered = threading.Barrier(3)

    def answer(review):
        def respond(_messages):
            answered.wait(timeout=10)
            return review
        return respond

    def die(_messages):
        answered.wait(timeout=10)
        time.sleep(0.3)
        return KeyboardInterrupt()

    dying = ScriptedModel(script(general_review=answer(general()), risk_review=answer(risk()),
                                 boundary_review=die))
    config = {"configurable": {"thread_id": "deliver-dying"}, "metadata": {"reins_graph": "delivery_chain"}}
    with open_checkpointer("sqlite", path=sqlite_env) as saver, pytest.raises(KeyboardInterrupt):
        # The CLI's durability for the chain: even written only at exit, an interrupted run is kept.
        build_graph(ModelSet.uniform(dying), checkpointer=saver).invoke(
            {"requirement": "Show a banner."}, config, durability="exit"
        )
    assert main(["runs", "--json"]) == 0
    (run,) = _json(capsys)["runs"]
    assert run["status"] == "incomplete" and run["resumable"] and not run["paused"]
    assert run["resume"] == "reins deliver --resume deliver-dying"
    with open_checkpointer("sqlite", path=sqlite_env) as saver:
        state = build_graph(ModelSet.uniform(dying), checkpointer=saver).get_state(config)
    assert state.values["plan"] and state.values["tasks"]  # completed stages were saved
    assert set(state.next) == {"reviewer"}
    # Reviews that answered before the interrupt are kept (how many depends on thread timing); the
    # interrupted boundary review is not.
    answered = {task.result["review_outcomes"][0]["role"] for task in state.tasks if task.result}
    assert answered <= {"general", "risk"}
