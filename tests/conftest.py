"""Suite-wide test configuration."""

import asyncio

import pytest


def pytest_configure(config):
    # langchain-core's retry parameters still call tenacity's initial backoff "initial", which
    # tenacity deprecates; tests with a short backoff would otherwise warn on every retry wrapper.
    config.addinivalue_line("filterwarnings", "ignore:The 'initial' parameter is deprecated:DeprecationWarning")


@pytest.fixture
def executor_hops(monkeypatch) -> list:
    """Every function the event loop hands to an executor thread while the test runs."""
    handed: list = []
    original = asyncio.BaseEventLoop.run_in_executor

    def counting(loop, executor, func, *args):
        handed.append(func)
        return original(loop, executor, func, *args)

    monkeypatch.setattr(asyncio.BaseEventLoop, "run_in_executor", counting)
    return handed


@pytest.fixture(autouse=True)
def reins_home(tmp_path_factory, monkeypatch):
    """Every test keeps its runs in a home of its own: the suite never writes into the user's home
    (``REINS_HOME``, and the platform's data directory a test that unsets it would fall back to)."""
    home = tmp_path_factory.mktemp("reins-home")
    monkeypatch.setenv("REINS_HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home.parent / f"{home.name}-xdg"))
    return home


@pytest.fixture(autouse=True)
def no_env_file(tmp_path_factory, monkeypatch):
    """``reins`` reads ``./.env`` into the process environment; in the suite it reads none (a
    developer's own .env must not leak into every test), except where a test points it at one."""
    from cli import env_file

    monkeypatch.setattr(env_file, "ENV_FILE", tmp_path_factory.getbasetemp() / "no-such.env")


@pytest.fixture
def offline_cli(monkeypatch, tmp_path):
    """``reins`` in an empty working directory, on the offline model, checkpointing in memory."""
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_API_KEY", "OPENAI_BASE_URL", "REINS_CHECKPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def sqlite_cli(monkeypatch, tmp_path, reins_home):
    """The CLI on a SQLite checkpointer in its own home, on the offline model: what a user's
    ``reins chat`` runs on."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL", "REINS_EMBEDDINGS"):
        monkeypatch.delenv(name, raising=False)
    return reins_home
