"""A run killed mid-review (the process dies) resumes from its SQLite checkpoint in another process
and finishes without re-running the stages that had completed — plan, tasks and the two reviews
that had already answered."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.delivery.delivery_builders import boundary, post

from reins.graphs.delivery_chain import build_graph
from reins.runtime.persistence.checkpoint import open_checkpointer
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
THREAD = {"configurable": {"thread_id": "killed-mid-review"}}

CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from delivery_builders import script
    from reins.graphs.delivery_chain import build_graph
    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.runtime.llm.models import ModelSet
    from reins.runtime.standins.scripted import ScriptedModel

    db, marker = sys.argv[1], Path(sys.argv[2])

    def hang(_messages):
        marker.write_text("boundary reviewer is blocking")
        time.sleep(600)  # killed long before this returns

    model = ScriptedModel(script(boundary_review=[hang]))
    with open_checkpointer("sqlite", path=db) as saver:
        graph = build_graph(ModelSet.uniform(model), checkpointer=saver, review_timeout_s=900)
        graph.invoke({"requirement": "Show a banner when the request limit is reached."},
                     {"configurable": {"thread_id": "killed-mid-review"}})
    """
)


def _reviewers_with_results(db: Path) -> set[str]:
    with open_checkpointer("sqlite", path=db) as saver:
        state = build_graph(ModelSet.uniform(ScriptedModel({})), checkpointer=saver).get_state(THREAD)
    return {task.name + ":" + str(task.result["review_outcomes"][0]["role"])
            for task in state.tasks if task.name == "reviewer" and task.result}


def test_killed_run_resumes_without_repeating_completed_stages(tmp_path):
    db, marker = tmp_path / "checkpoints.db", tmp_path / "blocking"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(marker)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90  # a cold interpreter start can be slow on CI
        done: set[str] = set()
        while time.monotonic() < deadline and not (marker.exists() and len(done) == 2):
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            time.sleep(0.1)
            if marker.exists() and db.exists():
                done = _reviewers_with_results(db)
        assert marker.exists() and done == {"reviewer:general", "reviewer:risk"}
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    # A new process (this one) with a model that can only answer what is left to do.
    model = ScriptedModel({"delivery.boundary_review": [boundary()], "delivery.supervisor_post": [post()]})
    with open_checkpointer("sqlite", path=db) as saver:
        graph = build_graph(ModelSet.uniform(model), checkpointer=saver)
        # only the reviewer that never answered is still pending
        assert graph.get_state(THREAD).next == ("reviewer",)
        out = graph.invoke(None, THREAD)
    assert model.contracts_called() == ["delivery.boundary_review", "delivery.supervisor_post"]
    assert out["run_status"] == "pass"
    assert out["review_bundle"]["coverage"] == {"general": "completed", "risk": "completed", "boundary": "completed"}
    assert [e["step"] for e in out["trace"]].count("delegate-plan") == 1
