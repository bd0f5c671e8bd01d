"""Acceptance: a CLI run killed with SIGKILL at any point resumes to the same result as a run that
was never interrupted, and no model call that had completed is made again (requests are counted on
a slow loopback provider)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.wire.behaviours import cooperative
from tests.wire.provider_stub import StubProvider

ROOT = Path(__file__).resolve().parents[2]
DELAY_S = 0.25  # per model call: long enough to kill one in flight
CHAT = "what is (17+25)*3?"
PLAN = "docs://versions/v0.2.0-ready.md"


class SlowProvider:
    """The cooperative stub, slowed down, counting requests received and answered."""

    def __init__(self) -> None:
        self.answered = 0
        self._lock = threading.Lock()
        self.stub = StubProvider(self._answer)

    def _answer(self, body: dict[str, Any]) -> Any:
        time.sleep(DELAY_S)
        with self._lock:
            self.answered += 1
        return cooperative(body)

    @property
    def received(self) -> int:
        return len(self.stub.bodies())


@pytest.fixture
def provider() -> Iterator[SlowProvider]:
    slow = SlowProvider()
    with slow.stub:
        yield slow


def environment(provider: SlowProvider) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    return {**clean, "OPENAI_API_KEY": "sk-kill-test-0123456789", "OPENAI_BASE_URL": provider.stub.base_url,
            "REINS_MODEL": "stub-model", "REINS_CHECKPOINT": "sqlite", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


def at_home(cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """Each working directory keeps its own runs (``REINS_HOME``), so a baseline and a killed run never meet."""
    return {**env, "REINS_HOME": str(cwd / "reins-home")}


def reins(cwd: Path, env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reins.cli", *args], cwd=cwd, env=at_home(cwd, env), input=stdin,
                          capture_output=True, text=True, timeout=300)


def killed(cwd: Path, env: dict[str, str], provider: SlowProvider, at: int, *args: str, stdin: str = "") -> int:
    """Start ``reins *args``, SIGKILL it while its ``at``-th model call is in flight; return how many
    calls were in flight then (they are the only ones a resume may make again)."""
    process = subprocess.Popen([sys.executable, "-m", "reins.cli", *args], cwd=cwd, env=at_home(cwd, env), stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    if stdin:
        process.stdin.write(stdin)
        process.stdin.flush()
    deadline = time.monotonic() + 120
    while provider.received < at:
        assert process.poll() is None, "the run ended before the kill point"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(DELAY_S / 4)  # the call is in flight; everything before it has completed and been saved
    in_flight = provider.received - provider.answered
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL and in_flight >= 1
    return in_flight


def only_thread(cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    runs = json.loads(reins(cwd, env, "runs", "--json").stdout)["runs"]
    assert len(runs) == 1
    return runs[0]


@pytest.fixture(scope="module")
def baseline() -> Callable[..., tuple[Any, int]]:
    """The uninterrupted run: its output and the model calls it made. Run once per command in a test
    module and shared by its kill points (the stub answers every run alike); module-scoped, so a
    parallel run keeps the module's tests on one worker and makes each baseline once."""
    made: dict[tuple[str, ...], tuple[Any, int]] = {}

    def run(tmp_path: Path, env: dict[str, str], provider: SlowProvider, *args: str,
            stdin: str = "") -> tuple[Any, int]:
        key = (*args, stdin)
        if key not in made:
            before = provider.received
            done = reins(tmp_path / "baseline", env, *args, stdin=stdin)
            made[key] = (done, provider.received - before)
        return made[key]

    return run


@pytest.fixture
def dirs(tmp_path: Path) -> Path:
    for name in ("baseline", "killed"):
        (tmp_path / name).mkdir()
    return tmp_path


@pytest.mark.parametrize("at", [3, 8], ids=["planning", "reviews"])
def test_deliver_killed_resumes_to_the_same_report(dirs, provider, baseline, at):
    env = environment(provider)
    args = ("deliver", "--scenario", "request-limit-banner", "--json")
    expected, calls = baseline(dirs, env, provider, *args)
    assert expected.returncode == 0 and calls == 10

    before = provider.received
    in_flight = killed(dirs / "killed", env, provider, before + at, *args)
    run = only_thread(dirs / "killed", env)
    assert run["status"] == "incomplete" and run["resume"] == f"reins deliver --resume {run['thread_id']}"
    resumed = reins(dirs / "killed", env, "deliver", "--resume", run["thread_id"], "--json")

    assert resumed.returncode == expected.returncode
    got, want = json.loads(resumed.stdout), json.loads(expected.stdout)
    assert (got["run_status"], got["report"]) == (want["run_status"], want["report"])
    assert provider.received - before == calls + in_flight  # only the calls in flight were made again


def test_chat_killed_mid_turn_finishes_the_turn(dirs, provider, baseline):
    env = environment(provider)
    expected, calls = baseline(dirs, env, provider, "chat", "--once", CHAT, "--new-thread", "chat-base")
    assert expected.returncode == 0 and calls == 3

    before = provider.received
    in_flight = killed(dirs / "killed", env, provider, before + 2, "chat", "--once", CHAT, "--new-thread", "chat-kill")
    finished = reins(dirs / "killed", env, "chat", "--thread", "chat-kill")  # interactive, input ends at once
    assert finished.returncode == 0
    assert "finishing the interrupted turn" in finished.stderr
    # the answer, then the prompt; the budget line's seconds are the runs' own wall times
    assert _timeless(finished.stdout.replace("you> ", "")) == _timeless(expected.stdout)
    assert provider.received - before == calls + in_flight


def _timeless(stdout: str) -> str:
    return re.sub(r"seconds [0-9.]+/", "seconds -/", stdout.strip())


def _tasklist_result(stdout: str) -> tuple[Any, ...]:
    payload = json.loads(stdout)
    return payload["final_decision"], payload["artifact"], payload["summary"], payload["paused"]


def test_unreviewed_tasklist_killed_resumes(dirs, provider, baseline):
    env = environment(provider)
    args = ("tasklist", PLAN, "--json")
    expected, calls = baseline(dirs, env, provider, *args)
    assert expected.returncode == 0 and calls == 2

    before = provider.received
    in_flight = killed(dirs / "killed", env, provider, before + 2, *args)
    run = only_thread(dirs / "killed", env)
    assert run["resume"] == f"reins resume {run['thread_id']}"
    resumed = reins(dirs / "killed", env, "resume", run["thread_id"], "--json")
    assert resumed.returncode == expected.returncode
    assert _tasklist_result(resumed.stdout) == _tasklist_result(expected.stdout)
    assert provider.received - before == calls + in_flight


@pytest.mark.parametrize("at", [1, 2], ids=["before-the-review", "right-after-the-decision"])
def test_reviewed_tasklist_killed_resumes(dirs, provider, baseline, at):
    env = environment(provider)
    args = ("tasklist", PLAN, "--review", "--json")
    expected, calls = baseline(dirs, env, provider, *args, stdin="approve\n")
    assert expected.returncode == 0 and calls == 2

    before = provider.received
    in_flight = killed(dirs / "killed", env, provider, before + at, *args, stdin="approve\n")
    thread = only_thread(dirs / "killed", env)["thread_id"]
    resumed = reins(dirs / "killed", env, "resume", thread, "--json")
    if at == 1:  # killed before the review: the resumed run pauses there and takes the decision
        assert resumed.returncode == 5 and json.loads(resumed.stdout)["pending_review"]["kind"] == "strategy_review"
        resumed = reins(dirs / "killed", env, "resume", thread, "--decision", '{"type": "approve"}', "--json")
    assert resumed.returncode == expected.returncode, resumed.stderr
    assert _tasklist_result(resumed.stdout) == _tasklist_result(expected.stdout)
    assert provider.received - before == calls + in_flight
