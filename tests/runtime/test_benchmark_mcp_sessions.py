"""benchmarks/mcp_sessions.py runs at a tiny size (no timing asserted: the numbers are the benchmark's)."""

from __future__ import annotations

from reins.benchmarks.mcp_sessions import mcp_session_overhead


def test_the_mcp_session_benchmark_runs_and_reports_its_ratio(capsys):
    from reins.runtime.tools.mcp_tools import SESSIONS

    opened = SESSIONS.opened
    measured = mcp_session_overhead(warm_calls=2, cold_calls=1)
    assert set(measured) == {"warm_ms", "cold_ms", "warm_over_cold"} and all(v > 0 for v in measured.values())
    assert SESSIONS.opened - opened == 1  # the warm calls shared one session
    assert "mcp_session_overhead: warm session" in capsys.readouterr().out
