import shutil
import tempfile
from pathlib import Path

import pytest

from tests.integration.services import IN_CI, postgres_available, running_postgres

# Outside CI a machine without PostgreSQL binaries skips these tests visibly; in CI they must run.
requires_postgres = pytest.mark.skipif(
    not IN_CI and not postgres_available(),
    reason="no PostgreSQL server binaries here (apt-get install postgresql); CI always runs these",
)


@pytest.fixture(scope="session")
def postgres_url():
    # Not under pytest's tmp dir: that one is private to root, and the server runs as 'postgres'.
    workdir = Path(tempfile.mkdtemp(prefix="reins-pg-"))
    try:
        with running_postgres(workdir) as url:
            yield url
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
