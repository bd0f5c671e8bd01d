"""Ctrl-C while a model call hangs: ``reins`` stops without waiting for it (the provider answers only
after the process has exited), the run is saved, the thread id and the exact resume command are
printed, exit 130; the resume command then finishes the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from reins.cli import main
from tests.wire.behaviours import asks_for, cooperative, schema_name
from tests.wire.conftest import KEY

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENT = "Show a banner when a user hits the request limit."
OTHER_REVIEWS = {"GeneralReview", "BoundaryReview"}
WAIT_S = 120  # only a bound on a broken run: the waits below end on what the provider and the process do


def test_ctrl_c_while_a_review_hangs_saves_the_run_and_says_how_to_resume(stub, tmp_path, monkeypatch, capsys,
                                                                            reins_home, fast_cli):
    risk_asked, released, others_answered = threading.Event(), threading.Event(), threading.Event()
    answered: set[str] = set()

    def answer(body):
        if asks_for("RiskReview")(body) and not released.is_set():
            risk_asked.set()
            released.wait()  # the provider hangs until the process has exited: no answer, the connection stays open
        reply = cooperative(body)
        if schema_name(body) in OTHER_REVIEWS:
            answered.add(schema_name(body))
            if answered == OTHER_REVIEWS:
                others_answered.set()
        return reply

    provider = stub(answer)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    env.update(REINS_MODEL="stub-model", OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY=KEY,
               REINS_HOME=str(reins_home), PYTHONPATH=str(ROOT), NO_COLOR="1")
    started = tmp_path / "started-here"
    started.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "reins.cli", "deliver", REQUIREMENT], cwd=started, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The other two reviews answer; the risk review keeps waiting.
        reached = risk_asked.wait(WAIT_S) and others_answered.wait(WAIT_S)
        assert reached and proc.poll() is None, proc.stderr.read() if proc.poll() is not None else "no reviews"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_S)  # the provider still hangs: only the cancel can end it
        hung_until_exit = not released.is_set()
    finally:
        released.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and hung_until_exit, err[-2000:]
    assert "Traceback" not in err and out == ""
    (line,) = [line for line in err.splitlines() if line.startswith("reins: interrupted")]
    thread = line.split("saved as thread ", 1)[1].split(";")[0]
    assert thread.startswith("deliver-")
    assert line.endswith(f"resume with: reins deliver --resume {thread}")

    # From another directory: the run is listed as incomplete, and the printed command finishes it
    # without asking for the plan or the tasks again.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    fast_cli(provider.base_url)
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    assert main(["runs", "--json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["thread_id"] == thread and run["status"] == "incomplete" and run["resumable"]
    asked = [schema_name(b) for b in provider.bodies()]
    assert main(["deliver", "--resume", thread, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run_status"] == "pass"
    again = [schema_name(b) for b in provider.bodies()][len(asked):]
    assert "DeliveryPlan" not in again and "DeliveryTasks" not in again and "RiskReview" in again
