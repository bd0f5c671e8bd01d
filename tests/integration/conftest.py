import shutil
import tempfile
from pathlib import Path

import pytest

from tests.integration.services import running_postgres


@pytest.fixture(scope="session")
def postgres_url():
    """One throwaway PostgreSQL 18 cluster (with pgvector) per test process: under pytest-xdist each
    worker starts its own, on its own free port and data directory."""
    # Not under pytest's tmp dir: that one is private to root, and as root the server runs as another user.
    workdir = Path(tempfile.mkdtemp(prefix="reins-pg-"))
    try:
        with running_postgres(workdir) as url:
            yield url
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
