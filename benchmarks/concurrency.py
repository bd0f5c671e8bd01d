"""Concurrent delivery runs under ``ainvoke`` with a simulated async model latency.

Every model call waits ``latency_s`` first (``asyncio.sleep`` on the async API, ``time.sleep`` on the
sync one), like a hosted model answering in 200 ms; the answer itself is the offline model's,
computed once per distinct prompt and replayed after that, so — as with a remote model — the client
process spends no time thinking. With async-native nodes, N concurrent runs overlap their waits on
one event loop, and what is left to share is the runtime's own CPU time per run.

The ratio, measured in one run: median latency of N runs started together / median latency of one
run alone — in process (``concurrent_ainvoke``) and through ``langgraph dev`` with langgraph-sdk
(``concurrent_server``, serving ``benchmarks/server_graph.py``). In process, the process CPU time per
run is printed too, and the same is measured for a plain LangGraph graph of the delivery chain's
shape (``benchmarks/baseline.py``): the framework's own floor under the same load.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr

from reins.runtime.standins.fake_base import ModelCall
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel

REQUIREMENT = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}


class LatencyModel(OfflineModel):
    """The offline model behind a fixed simulated latency per call, its answers memoised per prompt."""

    latency_s: float = 0.2
    _answers: dict[Any, Any] = PrivateAttr(default_factory=dict)

    def respond(self, call: ModelCall) -> Any:
        key = (call.contract, call.structured, call.tool_names, tuple(str(m.content) for m in call.messages))
        if key not in self._answers:
            self._answers[key] = super().respond(call)
        return self._answers[key]

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        time.sleep(self.latency_s)
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        await asyncio.sleep(self.latency_s)
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


async def _timed(graph: Any, given: Any = REQUIREMENT) -> float:
    started = time.perf_counter()
    result = await graph.ainvoke(given)
    if given is REQUIREMENT and result["run_status"] != "pass":
        raise RuntimeError(f"the benchmark scenario should pass, not {result['run_status']}")
    return time.perf_counter() - started


@dataclass(frozen=True)
class Measured:
    """One graph under load: a single run's latency and, per level, the median latency of the runs
    started together and the process CPU time they took, per run."""

    single_s: float
    median_s: dict[int, float]
    cpu_ms: dict[int, float]

    def ratio(self, runs: int) -> float:
        return self.median_s[runs] / self.single_s


async def _measure(graph: Any, given: Any, levels: tuple[int, ...]) -> Measured:
    await asyncio.gather(*(_timed(graph, given) for _ in range(5)))  # warm imports, caches, memoised answers
    single = statistics.median([await _timed(graph, given) for _ in range(3)])
    medians, cpu = {}, {}
    for runs in levels:
        started = time.process_time()
        medians[runs] = statistics.median(await asyncio.gather(*(_timed(graph, given) for _ in range(runs))))
        cpu[runs] = (time.process_time() - started) * 1000 / runs
    return Measured(single, medians, cpu)


def concurrent_ainvoke(latency_s: float = 0.2, levels: tuple[int, ...] = (50, 100)) -> dict[str, float]:
    """Reins' delivery chain, then a plain LangGraph graph of the same shape (``benchmarks/baseline.py``:
    async nodes, the same model calls, no guardrails) as the framework's floor under the same load."""
    from reins.benchmarks.baseline import build_baseline_graph, record_delivery_run
    from reins.graphs.delivery_chain import build_graph

    reins = build_graph(models=ModelSet.uniform(LatencyModel(latency_s=latency_s)))
    plain = build_baseline_graph(LatencyModel(latency_s=latency_s), record_delivery_run(), asynchronous=True)

    async def measure() -> tuple[Measured, Measured]:
        return await _measure(reins, REQUIREMENT, levels), await _measure(plain, {}, levels)

    ours, floor = asyncio.run(measure())

    def listed(measured: Measured) -> str:
        return "; ".join(
            f"{runs} concurrent: median {measured.median_s[runs]:.2f}s → ratio {measured.ratio(runs):.2f}, "
            f"CPU {measured.cpu_ms[runs]:.1f} ms/run" for runs in levels
        )

    print(
        f"concurrent_ainvoke: delivery runs with {latency_s * 1000:.0f} ms per model call, one alone {ours.single_s:.2f}s; "
        f"{listed(ours)} (goals: ≤ 1.5 at 50, ≤ 2 at 100). Plain LangGraph, same shape and calls, no guardrails "
        f"(the framework's floor): one alone {floor.single_s:.2f}s; {listed(floor)}"
    )
    return {str(runs): ours.ratio(runs) for runs in levels} | {f"plain_{runs}": floor.ratio(runs) for runs in levels}


# --------------------------------------------------------------------------- through the dev server

SERVER_CONFIG = "<config>"  # replaced by a config written into the server's temporary directory
SERVER_GRAPH = "delivery_chain_bench"


@contextlib.contextmanager
def _dev_server(root: Path, jobs: int) -> Iterator[str]:
    """``langgraph dev`` on a free loopback port with the benchmark's config; yields its URL."""
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = root / ".reins" / f"bench-langgraph-dev-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = [str(Path(sys.executable).with_name("langgraph")), "dev", "--no-browser", "--no-reload",
               "--host", "127.0.0.1", "--port", str(port), "--config", SERVER_CONFIG, "--n-jobs-per-worker", str(jobs)]
    env = {**os.environ, "LANGSMITH_TRACING": "false", "REINS_MODEL": ""}
    # The in-memory server keeps its assistants and threads in ``.langgraph_api`` under its working
    # directory: a temporary one, so the benchmark's graph never shows up in the project's own server.
    workdir = tempfile.mkdtemp(prefix="reins-bench-server-")
    config = Path(workdir) / "langgraph.json"
    config.write_text(json.dumps({
        "dependencies": [str(root)],
        "graphs": {SERVER_GRAPH: f"{root / 'benchmarks' / 'server_graph.py'}:graph"},
        "python_version": "3.11",
    }))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    command[command.index(SERVER_CONFIG)] = str(config)
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"langgraph dev exited early; see {log_path}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"langgraph dev did not start; see {log_path}")
            time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)


def concurrent_server(runs: int = 20) -> float:
    """``runs`` delivery runs started together through ``langgraph dev`` (langgraph-sdk), median latency
    against one run alone through the same server."""
    from langgraph_sdk import get_client

    root = Path(__file__).resolve().parents[1]

    async def timed(client: Any) -> float:
        thread = await client.threads.create()
        started = time.perf_counter()
        result = await client.runs.wait(thread["thread_id"], SERVER_GRAPH, input=REQUIREMENT)
        if result.get("run_status") != "pass":
            raise RuntimeError(f"the benchmark scenario should pass, not {result.get('run_status')}")
        return time.perf_counter() - started

    async def measure(url: str) -> tuple[float, float]:
        client = get_client(url=url)
        await asyncio.gather(*(timed(client) for _ in range(3)))  # warm the server's graph and caches
        single = statistics.median([await timed(client) for _ in range(3)])
        together = statistics.median(await asyncio.gather(*(timed(client) for _ in range(runs))))
        return single, together

    with _dev_server(root, jobs=runs + 5) as url:
        single, together = asyncio.run(measure(url))
    ratio = together / single
    print(f"concurrent_server: through langgraph dev, one run alone {single:.2f}s; {runs} concurrent: median "
          f"{together:.2f}s → ratio {ratio:.2f} (goal ≤ 2)")
    return ratio
