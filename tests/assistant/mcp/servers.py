"""Configurations for the test MCP server (``notes_server``), over stdio or streamable HTTP on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
MODULE = "tests.assistant.mcp.notes_server"


def stdio_server(record: Path, kind: str = "normal", slow_s: float = 0, gate: Path | None = None,
                 **options: Any) -> dict[str, Any]:
    """The server over stdio; its ``readOnlyHint`` believed (``trust_annotations``) unless
    ``trust_annotations=False`` is given (a server the user does not vouch for). ``slow_s``: how long
    ``slow_note`` takes to answer once it has recorded its execution; ``gate``: the file whose
    creation lets ``gated_note`` answer."""
    env = {"NOTES_RECORD": str(record), **({"NOTES_SLOW_S": str(slow_s)} if slow_s else {}),
           **({"NOTES_GATE": str(gate)} if gate else {})}
    return {"command": sys.executable, "args": ["-m", MODULE, "stdio", kind], "env": env, "cwd": str(ROOT),
            "trust_annotations": True, **options}


def config(**servers: dict[str, Any]) -> dict[str, Any]:
    return {"mcpServers": servers}


def executions(record: Path) -> list[str]:
    """What the server really ran: one line per execution of its side-effecting tool."""
    return record.read_text().splitlines() if record.exists() else []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def http_server(record: Path, kind: str = "normal", timeout_s: float = 20) -> Iterator[str]:
    """Run the server over streamable HTTP on a free loopback port; yield its /mcp URL; stop it."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", MODULE, "http", str(port), kind], cwd=ROOT,
                            env={"NOTES_RECORD": str(record), "PATH": "/usr/bin:/bin"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test MCP server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
