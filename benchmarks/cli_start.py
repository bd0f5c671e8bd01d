"""How fast ``reins`` answers before any run: an argument error and ``reins doctor`` (no ``--check``),
each as a ratio to starting Python alone (``python -c pass``), medians of alternating runs; and the
CPU time ``reins chat`` has used when its prompt is on a terminal (a pseudo-terminal; the offline
stand-in, no MCP server), against the same of ``python -c pass``."""

from __future__ import annotations

import os
import pty
import select
import statistics
import subprocess
import tempfile
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "bad_arguments": ["-m", "reins.cli", "deliver", "--bogus"],
    "doctor": ["-m", "reins.cli", "doctor"],
}
GOALS_S = {"bad_arguments": 0.5, "doctor": 1.0}
CHAT_PROMPT_GOAL_S = 1.0  # of CPU, the stand-in and no MCP server
PROMPT = b"you>"
WAIT_S = 120  # only a bound on a broken start
CAN_MEASURE_CHAT = Path("/proc/self/stat").exists()  # the prompt's CPU is read from /proc


def _seconds(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - started


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a running process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def chat_prompt_cpu(home: Path) -> float:
    """CPU seconds ``reins chat`` has used when its prompt is on a pseudo-terminal; Ctrl-D then ends it."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    env.update(REINS_HOME=str(home), TERM="xterm", COLUMNS="80", LINES="24", PROMPT_TOOLKIT_NO_CPR="1")
    process = subprocess.Popen([sys.executable, "-m", "reins.cli", "chat"], cwd=ROOT, env=env, stdin=slave,
                               stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""
    try:
        while PROMPT not in seen:
            ready, _, _ = select.select([master], [], [], WAIT_S)
            if not ready:
                raise RuntimeError(f"reins chat showed no prompt within {WAIT_S} s: {seen[-200:]!r}")
            seen += os.read(master, 65536)
        cpu = _cpu_seconds(process.pid)
        os.write(master, b"\x04")  # Ctrl-D: the chat ends
        process.wait(WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return cpu


def child_cpu(args: list[str]) -> float:
    """CPU seconds of a finished child (its user and system time)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli_start(rounds: int = 7) -> dict[str, float]:
    times: dict[str, list[float]] = {"python": [], **{name: [] for name in COMMANDS}}
    cpu: dict[str, list[float]] = {"python": [], "chat_prompt": []}
    with tempfile.TemporaryDirectory() as home:
        for _ in range(rounds):  # alternate, so machine noise hits every command alike
            times["python"].append(_seconds(["-c", "pass"]))
            for name, args in COMMANDS.items():
                times[name].append(_seconds(args))
            if CAN_MEASURE_CHAT:
                cpu["python"].append(child_cpu(["-c", "pass"]))
                cpu["chat_prompt"].append(chat_prompt_cpu(Path(home)))
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = {name: medians[name] / medians["python"] for name in COMMANDS}
    parts = [f"{name} ×{ratios[name]:.1f} ({medians[name] * 1000:.0f} ms, goal < {GOALS_S[name]:g} s)"
             for name in COMMANDS]
    if CAN_MEASURE_CHAT:
        prompt, python = statistics.median(cpu["chat_prompt"]), max(statistics.median(cpu["python"]), 0.001)
        ratios["chat_prompt"] = prompt / python
        parts.append(f"chat_prompt {prompt * 1000:.0f} ms of CPU ×{ratios['chat_prompt']:.1f} "
                     f"(goal < {CHAT_PROMPT_GOAL_S:g} s)")
    print(f"cli_start: against python -c pass ({medians['python'] * 1000:.0f} ms): {', '.join(parts)}")
    return ratios
