"""Suite-wide test configuration."""

import asyncio
import sys

import pytest


def pytest_configure(config):
    # langchain-core's retry parameters still call tenacity's initial backoff "initial", which
    # tenacity deprecates; tests with a short backoff would otherwise warn on every retry wrapper.
    config.addinivalue_line("filterwarnings", "ignore:The 'initial' parameter is deprecated:DeprecationWarning")
    config.addinivalue_line("markers", "xdist_group(name): run on one pytest-xdist worker with its group (loadgroup)")


SHARED_SCOPES = ("session", "package", "module", "class")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """Under ``pytest -n N --dist loadgroup`` a test module whose tests share a fixture built once (a
    server, a finished run: module scope) runs whole on one worker, and every test on the suite's
    session-scoped fixture (the PostgreSQL cluster) on one worker, so each is built once; every other
    test is scheduled on its own, which keeps all workers busy to the end of the run."""
    groups: dict[str, str] = {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        shared = _shared_fixtures(item)
        if any(scope == "session" for scope, _ in shared):
            groups[module] = "+".join(sorted(name for scope, name in shared if scope == "session"))
        elif shared:
            groups.setdefault(module, module)
    for item in items:
        group = groups.get(item.nodeid.split("::", 1)[0])
        if group and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def _shared_fixtures(item) -> list[tuple[str, str]]:
    """(scope, name) of the suite's own fixtures wider than a test that ``item`` uses (a plugin's,
    such as pytest's ``tmp_path_factory``, costs nothing to build twice)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    used = []
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if definitions and definitions[-1].baseid and definitions[-1].scope in SHARED_SCOPES:
            used.append((definitions[-1].scope, name))
    return used


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
    from reins.cli import env_file

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


@pytest.fixture(autouse=True)
def mcp_sessions_closed():
    """The MCP sessions a test opened in this process (its stdio servers) close when it ends: the
    process-wide pool keeps a session for minutes, which would leave servers running behind the test."""
    yield
    tools = sys.modules.get("reins.runtime.tools.mcp_tools")
    if tools is not None:
        for scope in {scope for scope, _ in tools.SESSIONS.open_sessions()}:
            tools.SESSIONS.close_scope(scope)


@pytest.fixture(autouse=True)
def pyyaml_as_a_user_has_it(request):
    """AgentDojo registers a quoting presenter for ``str`` on PyYAML's default dumper when imported
    (``agentdojo.yaml_loader``; its environment loading relies on it), and every later ``yaml.dump`` in
    the process quotes each key, LangChain's Mermaid front matter included. AgentDojo's tests get the
    presenter; every other test sees PyYAML as a user's process does, whatever ran before it."""
    import yaml

    def pristine() -> None:
        if "yaml_representers" in yaml.Dumper.__dict__:
            del yaml.Dumper.yaml_representers  # back to the Representer's own table

    pristine()
    if "agentdojo" in request.node.nodeid:
        try:
            from agentdojo.yaml_loader import quoted_presenter
        except ImportError:
            pass
        else:
            yaml.add_representer(str, quoted_presenter)
    yield
    pristine()
