"""Ctrl-C while a model call hangs: ``reins`` stops within 2 s, the run is saved, the thread id and the
exact resume command are printed, exit 130; the resume command then finishes the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from cli import main
from tests.wire.behaviours import asks_for, cooperative, schema_name
from tests.wire.conftest import KEY

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENT = "Show a banner when a user hits the request limit."


def test_ctrl_c_while_a_review_hangs_saves_the_run_and_says_how_to_resume(stub, tmp_path, monkeypatch, capsys,
                                                                            reins_home, fast_cli):
    released = threading.Event()

    def answer(body):
        if asks_for("RiskReview")(body) and not released.is_set():
            released.wait(60)  # the provider hangs: no answer, the connection stays open
        return cooperative(body)

    provider = stub(answer)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    env.update(REINS_MODEL="stub-model", OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY=KEY,
               REINS_HOME=str(reins_home), PYTHONPATH=str(ROOT), NO_COLOR="1")
    started = tmp_path / "started-here"
    started.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "cli", "deliver", REQUIREMENT], cwd=started, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not any(schema_name(b) == "RiskReview" for b in provider.bodies()):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        time.sleep(0.3)  # the other two reviews answer; the risk review keeps waiting
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        stopped_after = time.monotonic() - sent
    finally:
        released.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert stopped_after < 2.0
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
