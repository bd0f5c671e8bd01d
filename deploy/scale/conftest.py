"""Fixtures of the scale-out check: one PostgreSQL, one Redis, and Agent Server processes on both
(started by the tests). The tests skip, with the reason, where the group is missing
(``deploy.scale.availability``)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from deploy.scale.report import REPORT


@pytest.fixture(scope="session")
def cluster():
    """PostgreSQL + Redis with the schema migrated once; server processes are started by the tests."""
    from deploy.scale.cluster import Cluster, migrate, running_redis
    from tests.integration.services import running_postgres

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
