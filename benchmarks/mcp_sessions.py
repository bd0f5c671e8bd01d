"""MCP call overhead: a call on the chat's warm session (what the assistant does: one session per
server per chat, ``reins.runtime.tools.mcp_sessions``) against a cold call that starts the server for itself
(``langchain-mcp-adapters``' default: a new session, so a new process, per call), on loopback.

Both go through the adapters' own LangChain tool; the warm call's median is the overhead a chat
pays per call once its session is open (goal ≤ 50 ms). Printed as a ratio warm / cold."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOAL_MS = 50.0
SERVER = {"command": sys.executable, "args": ["-m", "reins.benchmarks.mcp_echo_server"], "cwd": str(ROOT)}


async def _timed(tool: Any, config: dict[str, Any], calls: int) -> list[float]:
    times = []
    for number in range(calls):
        started = time.perf_counter()
        await tool.ainvoke({"text": f"hello {number}"}, config=config)
        times.append(time.perf_counter() - started)
    return times


def mcp_session_overhead(warm_calls: int = 30, cold_calls: int = 5) -> dict[str, float]:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from reins.runtime.tools.mcp_tools import SESSIONS, load_mcp_tools

    toolset = load_mcp_tools({"mcpServers": {"echo": {**SERVER, "trust": ["echo"]}}})
    (warm_tool,) = [t.tool for t in toolset.tools]
    scope = f"bench-{time.perf_counter_ns()}"
    config = {"configurable": {"thread_id": scope}}

    async def measure() -> tuple[list[float], list[float]]:
        await warm_tool.ainvoke({"text": "open"}, config=config)  # the chat's first call opens its session
        warm = await _timed(warm_tool, config, warm_calls)
        cold_client = MultiServerMCPClient({"echo": {"transport": "stdio", **SERVER}})  # type: ignore[dict-item]
        (cold_tool,) = await cold_client.get_tools(server_name="echo")
        return warm, await _timed(cold_tool, {}, cold_calls)

    warm, cold = asyncio.run(measure())
    SESSIONS.close_scope(scope)
    warm_ms, cold_ms = statistics.median(warm) * 1000, statistics.median(cold) * 1000
    ratio = warm_ms / cold_ms
    print(f"mcp_session_overhead: warm session {warm_ms:.1f} ms per call (goal ≤ {GOAL_MS:g} ms), "
          f"cold process per call {cold_ms:.0f} ms: warm/cold ×{ratio:.3f}")
    return {"warm_ms": warm_ms, "cold_ms": cold_ms, "warm_over_cold": ratio}
