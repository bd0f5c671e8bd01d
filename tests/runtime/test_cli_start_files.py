"""At the command line: a bad user file is refused before anything runs, in one line; read-only
commands create no file; a closed or full stdout ends a command quietly with its own exit code."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 2 * 1024**3  # a command that reads /dev/zero whole dies here instead of taking the machine
TIMEOUT_S = 120  # a command waiting on a FIFO's writer never ends: the test fails at this limit


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _reins(args: list[str], home: Path, stdout=subprocess.PIPE, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "reins.cli", *args], cwd=ROOT, env={**clean, "REINS_HOME": str(home), **env},
                          stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=TIMEOUT_S, preexec_fn=_capped)


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def fifo(tmp_path) -> str:
    path = tmp_path / "pipe.toml"
    os.mkfifo(path)
    return str(path)


def test_a_broken_flow_rules_file_stops_chat_before_anything_runs(home, tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - name: landlord-only\n    kind: args_match\n")  # no tool, no arg
    done = _reins(["chat", "--once", "what is 2 + 3?"], home, REINS_FLOW_RULES=str(rules))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reins: error: REINS_FLOW_RULES: rules.yaml: rules.0.args_match."), lines
    assert done.stdout == ""
    assert list(home.iterdir()) == []  # refused before a checkpoint, a note or a model call


def test_a_broken_flow_rules_file_names_its_rule_in_chat_and_doctor(home, tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - name: pay-once\n    kind: max_per_turn\n    tools: [pay]\n    limit: 1\n"
                     "  - name: landlord-only\n    kind: args_match\n")
    reason = "REINS_FLOW_RULES: rules.yaml: rules.1.args_match.tools: Field required (rule 'landlord-only')"
    chat = _reins(["chat", "--once", "hi"], home, REINS_FLOW_RULES=str(rules))
    assert (chat.returncode, chat.stderr.strip()) == (2, f"reins: error: {reason}")
    doctor = _reins(["doctor"], home, REINS_FLOW_RULES=str(rules))
    assert doctor.returncode == 2, doctor.stderr[-500:]
    assert f"  flow_rules        rules.yaml (REINS_FLOW_RULES): REFUSED - {reason}" in doctor.stdout.splitlines()
    rules.write_text("rules:\n  - name: pay-once\n    kind: max_per_turn\n    tools: [pay]\n    limit: 1\n")
    fixed = _reins(["doctor"], home, REINS_FLOW_RULES=str(rules))
    assert fixed.returncode == 0 and "  flow_rules        rules.yaml (REINS_FLOW_RULES): 1 rule(s)" in fixed.stdout


@pytest.mark.parametrize(
    ("variable", "special"),
    [("REINS_FLOW_RULES", "/dev/zero"), ("REINS_ASSISTANT_PROMPT_FILE", "fifo"), ("REINS_MCP_CONFIG", "/dev/zero"),
     ("REINS_MCP_CONFIG", "fifo")],
)
def test_a_device_or_a_fifo_as_a_chat_file_is_refused_at_once(home, fifo, variable, special):
    path = fifo if special == "fifo" else special
    done = _reins(["chat", "--once", "hello"], home, **{variable: path})
    assert done.returncode == 2, done.stderr[-500:]
    assert done.stderr.strip().splitlines() == [f"reins: error: {variable}: {Path(path).name}: not a regular file"]
    assert list(home.iterdir()) == []


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_device_or_a_fifo_as_replay_records_is_refused_at_once(home, fifo, special):
    path = fifo if special == "fifo" else special
    done = _reins(["replay", "--eval", path], home)
    assert done.returncode == 2, done.stderr[-500:]
    assert done.stderr.strip().splitlines() == [
        f"reins: error: reins replay --eval: {Path(path).name}: not a regular file"]


@pytest.mark.parametrize("args", [["replay", "no-such-thread"], ["resume", "no-such-thread", "--decision", '{"type": "approve"}'],
                                  ["runs"], ["chat", "--memory"], ["replay", "--eval"]])
def test_a_read_only_command_creates_no_file_in_an_empty_home(home, args):
    done = _reins(args, home)
    assert done.returncode in (0, 2), done.stderr[-500:]
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in home.iterdir()) == []


def test_a_closed_stdout_ends_the_command_quietly_with_its_own_exit_code(home):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line: every write finds no reader (| head)
    try:
        done = subprocess.run([sys.executable, "-m", "reins.cli", "doctor", "--budget"], cwd=ROOT,
                              env={**clean, "REINS_HOME": str(home)}, stdin=subprocess.DEVNULL, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("args", [["doctor", "--budget", "--json"], ["runs", "--json"]])
def test_a_full_stdout_ends_the_command_quietly_with_its_own_exit_code(home, args):
    with open("/dev/full", "w") as full:
        done = _reins(args, home, stdout=full)
    assert (done.returncode, done.stderr) == (0, "")
