"""How fast ``reins`` answers before any run: an argument error and ``reins doctor`` (no ``--check``),
each as a ratio to starting Python alone (``python -c pass``), medians of alternating runs."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "bad_arguments": ["-m", "reins.cli", "deliver", "--bogus"],
    "doctor": ["-m", "reins.cli", "doctor"],
}
GOALS_S = {"bad_arguments": 0.5, "doctor": 1.0}


def _seconds(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - started


def cli_start(rounds: int = 7) -> dict[str, float]:
    times: dict[str, list[float]] = {"python": [], **{name: [] for name in COMMANDS}}
    for _ in range(rounds):  # alternate, so machine noise hits every command alike
        times["python"].append(_seconds(["-c", "pass"]))
        for name, args in COMMANDS.items():
            times[name].append(_seconds(args))
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = {name: medians[name] / medians["python"] for name in COMMANDS}
    parts = [f"{name} ×{ratios[name]:.1f} ({medians[name] * 1000:.0f} ms, goal < {GOALS_S[name]:g} s)"
             for name in COMMANDS]
    print(f"cli_start: against python -c pass ({medians['python'] * 1000:.0f} ms): {', '.join(parts)}")
    return ratios
