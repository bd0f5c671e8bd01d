"""Start ``llama-server`` on loopback with the flags the result file records, wait until its model is
loaded, stop it at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def server_flags(threads: int | None = None) -> list[str]:
    """The flags the runs use. ``--jinja``: the model's own chat template, tool calls included. One slot
    (``-np 1``) holding the whole context: the reviewers' parallel calls queue instead of splitting the
    cache. ``--cache-ram``: earlier prompts kept in memory, so a call whose prefix an earlier call of
    another contract wrote is served from cache (llama.cpp reports the tokens as ``cached_tokens``)."""
    return ["--jinja", "-c", "16384", "-np", "1", "--cache-ram", "2048", "-t", str(threads or os.cpu_count() or 2),
            "--alias", "local"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(base_url: str, proc: subprocess.Popen | None, timeout_s: float) -> None:
    """Poll ``/health`` (200 once the model is loaded) until ``timeout_s``; a server that exits fails at once."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"llama-server exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{base_url}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1.0)
    raise RuntimeError(f"llama-server was not ready within {timeout_s:.0f} s")


@contextmanager
def llama_server(binary: Path, model: Path, log_file: Path, ready_timeout_s: float = 600) -> Iterator[str]:
    """Run the server on a free loopback port, niced (``REINS_REAL_NICE``, default 19: a shared machine);
    yield its base URL."""
    port = free_port()
    log_file.parent.mkdir(parents=True, exist_ok=True)
    command = ["nice", "-n", os.environ.get("REINS_REAL_NICE", "19"), str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
               *server_flags()]
    with log_file.open("ab") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, proc, ready_timeout_s)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
