"""Every benchmark of ``reins bench`` runs, at a tiny size: a broken benchmark fails here, not on the
day someone measures. Only that each completes and prints its ratio line is checked (ratios from so
few samples on a shared machine mean nothing)."""

from __future__ import annotations

import math

import pytest

from reins.benchmarks import run as benchmarks
from reins.cli.bench import BENCHMARKS

TINY = {
    "review_parallelism": {"delay_s": 0.05},
    "guardrail_overhead": {},
    "redaction_scaling": {},
    "checkpoint_memory": {},
    "call_overhead": {"runs": 1},
    "checkpoint_cost": {"runs": 1, "slow_runs": 1, "latency_s": 0.01},
    "concurrent_ainvoke": {"latency_s": 0.01, "levels": (2,)},
    "concurrent_server": {"runs": 2},
    "cli_start": {"rounds": 1},
    "mcp_session_overhead": {"warm_calls": 2, "cold_calls": 1},
}


def test_every_benchmark_has_a_tiny_size():
    assert tuple(TINY) == BENCHMARKS


@pytest.mark.parametrize("name", BENCHMARKS)
def test_the_benchmark_completes_and_prints_its_ratio(name, capsys):
    result = getattr(benchmarks, name)(**TINY[name])
    ratios = list(result.values()) if isinstance(result, dict) else [result]
    # finite, and not a division by a time that was never measured (a stand-in's own time read as 0)
    assert ratios and all(isinstance(r, float) and math.isfinite(r) and abs(r) < 1e4 for r in ratios)
    printed = capsys.readouterr().out
    assert printed.startswith(f"{name}: ") and printed.count("\n") == 1  # its one line
