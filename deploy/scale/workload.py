"""What the scale-out check sends and how it reads the result: inputs of the three graphs, the outcome
that must not depend on which process ran a run, the reference outcome of one process (the graph
invoked here, in this process), and which server process started which run (its own log)."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SCENARIOS = ["request-limit-banner", "register-login", "bypass-review", "sso-security-blocker", "vague-improvement"]
PLANS = ["v0.2.0-ready", "v0.2.2-needs-revision", "v0.3.0-needs-review", "v0.4.0-overscoped", "draft-ideas"]
CHATS = ["what is 12*7?", "what is 100/4?", "hello there", "use calculator on 2+3*4", "/help"]


def workload(count: int) -> list[tuple[str, dict[str, Any]]]:
    """``count`` (graph, input) pairs cycling over the three graphs and their inputs."""
    kinds = [("delivery_chain", {"requirement_uri": f"demo://scenarios/{s}/requirement.md"}) for s in SCENARIOS]
    kinds += [("tasklist_agent", {"request": f"/tasklist docs://versions/{p}.md"}) for p in PLANS]
    kinds += [("assistant", {"messages": [{"role": "user", "content": c}]}) for c in CHATS]
    return [kinds[i % 3 * 5 + i // 3 % 5] for i in range(count)]  # the graphs interleaved


def outcome(graph_id: str, values: dict[str, Any]) -> str:
    """What a run decided, the same whichever process ran it."""
    if graph_id == "delivery_chain":
        return str(values.get("run_status"))
    if graph_id == "tasklist_agent":
        return f"{values.get('final_decision')}/{values.get('status', '')}"
    return str((values.get("answer") or {}).get("verdict")) + ":" + str(values.get("reply", ""))[:60]


def reference_outcomes(pairs: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """The outcome of each distinct input run once in this one process (the offline model)."""
    import importlib
    import json

    from langgraph.checkpoint.memory import InMemorySaver

    built: dict[str, Any] = {}
    found: dict[str, str] = {}
    for graph_id, given in pairs:
        key = graph_id + json.dumps(given, sort_keys=True)
        if key in found:
            continue
        if graph_id not in built:
            module = importlib.import_module(f"reins.graphs.{graph_id}")
            built[graph_id] = module.build_graph(checkpointer=InMemorySaver())
        values = built[graph_id].invoke(given, {"configurable": {"thread_id": key[:60]}})
        found[key] = outcome(graph_id, values)
    return found


def key_of(graph_id: str, given: dict[str, Any]) -> str:
    import json

    return graph_id + json.dumps(given, sort_keys=True)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STARTED = re.compile(r"Starting background run.*?run_attempt=(\d+).*?run_id=([0-9a-f-]{36})")


def runs_started(log: Path) -> list[tuple[str, int]]:
    """(run id, attempt) of every run this server process started, from its own log."""
    text = _ANSI.sub("", log.read_text(errors="replace"))
    return [(m.group(2), int(m.group(1))) for m in _STARTED.finditer(text)]


def starts_by_run(logs: Sequence[Path]) -> Counter:
    return Counter(run_id for log in logs for run_id, _ in runs_started(log))


async def run_all(urls: Sequence[str], pairs: Sequence[tuple[str, dict[str, Any]]],
                  context: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Create a thread and a run for each pair, spread over ``clients`` in turn, all at once; join
    each through the client that created it. Returns {graph_id, key, run_id, status, values, client}."""
    from langgraph_sdk import get_client

    clients = [get_client(url=url, timeout=600) for url in urls]  # on this event loop

    async def one(index: int, graph_id: str, given: dict[str, Any]) -> dict[str, Any]:
        client = clients[index % len(clients)]
        thread = await client.threads.create()
        run = await client.runs.create(thread["thread_id"], graph_id, input=given, context=context)
        joined = await client.runs.join(thread["thread_id"], run["run_id"])
        status = (await client.runs.get(thread["thread_id"], run["run_id"]))["status"]
        values = (await client.threads.get_state(thread["thread_id"]))["values"]  # what the thread keeps
        return {"graph_id": graph_id, "key": key_of(graph_id, given), "run_id": run["run_id"], "status": status,
                "values": values, "joined": joined, "client": index % len(clients), "thread_id": thread["thread_id"]}

    return list(await asyncio.gather(*(one(i, g, x) for i, (g, x) in enumerate(pairs))))


def timed_batch(urls: Sequence[str], pairs: Sequence[tuple[str, dict[str, Any]]]) -> tuple[float, list[dict]]:
    """(seconds, results) of one batch run together."""
    started = time.perf_counter()
    results = asyncio.run(run_all(urls, pairs))
    return time.perf_counter() - started, results
