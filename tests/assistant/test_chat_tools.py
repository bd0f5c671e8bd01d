"""runtime/tools/chat_tools.py: the four chat tools, their limits, and their scope."""

import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reins.runtime.tools import chat_tools
from reins.runtime.tools.chat_tools import ToolFailure, calculator, clock
from reins.runtime.tools.registry import RegisteredTool, SubagentToolDefinition, ToolRegistry
from reins.runtime.tools.toolbox import default_registry
from reins.schemas.assistant import ToolCall

from tests.assistant.helpers import CHAT_TOOLS

SKILL_AND_MEMORY_TOOLS = ("load_skill", "read_skill_file", "remember", "forget")
PAGE = (
    "<html><head><title>t</title><script>alert('x')</script></head><body><h1>Hello from Reins</h1>"
    + "<p>" + "lorem ipsum " * 100 + "</p></body></html>"
)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server API
        # Recorded before answering: the client may return (and the next test clear the list)
        # before a handler thread that recorded afterwards got to it.
        self.server.hits.append(self.path)
        port = self.server.server_address[1]
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE),
            "/plain": (200, "text/plain", "just text"),
            "/binary": (200, "image/png", "\x89PNG"),
            "/missing": (404, "text/plain", "nope"),
        }
        if self.path == "/to-allowed":
            return self._redirect(f"http://127.0.0.1:{port}/plain")
        if self.path == "/to-foreign":
            return self._redirect(f"http://localhost:{port}/plain")
        if self.path == "/loop":
            return self._redirect("/loop")
        status, content_type, body = routes.get(self.path, (404, "text/plain", "nope"))
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.hits = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def tools():
    registry = ToolRegistry()
    chat_tools.register(registry, http_allowlist=("127.0.0.1",))
    return registry.for_scope("chat")


def _get(tools, server, path):
    return tools.get("http_get").func(url=f"http://127.0.0.1:{server.server_address[1]}{path}")


def test_http_get_returns_trimmed_text_from_an_allowlisted_host(tools, server):
    text = _get(tools, server, "/page")
    assert text.startswith("Hello from Reins\nlorem ipsum")
    assert len(text) == 500 and text.endswith("…")
    assert "<" not in text and "alert" not in text


def test_http_get_refuses_a_host_not_on_the_allowlist(tools, server):
    server.hits.clear()
    port = server.server_address[1]
    with pytest.raises(ToolFailure, match="not on the allowlist"):
        tools.get("http_get").func(url=f"http://localhost:{port}/plain")
    assert server.hits == []  # refused before any request


@pytest.mark.parametrize(
    ("path", "outcome"),
    [
        ("/plain", "just text"),
        ("/to-allowed", "just text"),
        ("/to-foreign", ToolFailure("not on the allowlist")),
        ("/loop", ToolFailure("redirects")),
        ("/missing", ToolFailure("HTTP 404")),
        ("/binary", ToolFailure("non-text content")),
    ],
)
def test_http_get_rechecks_redirects_and_reports_failures(tools, server, path, outcome):
    if isinstance(outcome, ToolFailure):
        with pytest.raises(ToolFailure, match=str(outcome)):
            _get(tools, server, path)
    else:
        assert _get(tools, server, path) == outcome


def test_http_get_reads_the_allowlist_from_settings(monkeypatch, server):
    registry = ToolRegistry()
    chat_tools.register(registry)
    fetch = registry.for_scope("chat").get("http_get").func
    url = f"http://127.0.0.1:{server.server_address[1]}/plain"
    monkeypatch.delenv("REINS_HTTP_ALLOWLIST", raising=False)
    with pytest.raises(ToolFailure, match="not on the allowlist"):
        fetch(url=url)
    monkeypatch.setenv("REINS_HTTP_ALLOWLIST", "example.com, 127.0.0.1")
    assert fetch(url=url) == "just text"


def test_http_get_times_out_cleanly(monkeypatch):
    import httpx

    def slow(request):
        raise httpx.ReadTimeout("slow", request=request)

    fetch = chat_tools.HttpGet(lambda: ("example.com",), transport=httpx.MockTransport(slow))
    with pytest.raises(ToolFailure, match="timed out"):
        fetch("https://example.com/")


@pytest.mark.parametrize(
    ("expression", "result"),
    [("(17+25)*3", "126"), ("__import__('os')", ToolFailure("function calls")), ("9**9**9", ToolFailure("exponents"))],
)
def test_calculator_tool(expression, result):
    if isinstance(result, ToolFailure):
        with pytest.raises(ToolFailure, match=str(result)):
            calculator(expression)
    else:
        assert calculator(expression) == result


@pytest.mark.parametrize(
    ("zone", "expected"),
    [(None, "2026-03-04T05:06:07+00:00"), ("Asia/Shanghai", "2026-03-04T13:06:07+08:00"), ("Mars/Base", ToolFailure("unknown time zone"))],
)
def test_clock_is_iso(zone, expected):
    fixed = lambda: datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)  # noqa: E731
    if isinstance(expected, ToolFailure):
        with pytest.raises(ToolFailure, match=str(expected)):
            clock(zone, now=fixed)
    else:
        assert clock(zone, now=fixed) == expected
        assert datetime.fromisoformat(clock(zone)).tzinfo is not None


@pytest.mark.parametrize(
    ("uri", "outcome"),
    [
        ("docs://notes/a.md", "# A\nalpha"),
        ("docs://../secret.md", ToolFailure("path escapes")),
        ("docs:///etc/passwd", ToolFailure("absolute paths")),
        ("docs://notes/missing.md", ToolFailure("not found")),
        ("file:///etc/passwd", ToolFailure("unsupported resource scheme")),
    ],
)
def test_read_doc_is_sandboxed(tmp_path, uri, outcome):
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "notes" / "a.md").write_text("# A\nalpha")
    (tmp_path / "secret.md").write_text("secret")
    registry = ToolRegistry()
    chat_tools.register(registry, docs_root=docs)
    read = registry.for_scope("chat").get("read_doc").func
    if isinstance(outcome, ToolFailure):
        with pytest.raises(ToolFailure, match=str(outcome)):
            read(uri=uri)
    else:
        assert read(uri=uri) == outcome


def test_chat_scope_holds_exactly_the_chat_tools_and_no_subagent():
    registry = default_registry()
    chat = registry.for_scope("chat")
    # The chat tools, then the skill tools and the memory tools, each registered by its own module.
    assert chat.names[: len(CHAT_TOOLS)] == CHAT_TOOLS
    assert set(chat.names[len(CHAT_TOOLS):]) == set(SKILL_AND_MEMORY_TOOLS)
    assert all(tool.subagent is None and tool.scopes == frozenset({"chat"}) for tool in chat)
    manager_tools = {t.name for t in registry.for_scope("delivery-chain-manager")}
    assert len(manager_tools) == 5 and all(name.endswith("-subagent") for name in manager_tools)
    assert not manager_tools & set(chat.names)


def test_a_subagent_registered_beside_the_chat_tools_stays_out_of_chat():
    registry = ToolRegistry()
    chat_tools.register(registry)
    registry.register(
        RegisteredTool(
            name="plan-subagent",
            description="plans",
            args_schema=ToolCall,
            scopes=frozenset({"delivery-chain-manager"}),
            subagent=SubagentToolDefinition("plan-subagent", "plan", ("requirement",), "plan", (), ("delivery-chain-manager",)),
        )
    )
    assert "plan-subagent" not in registry.for_scope("chat").names
    assert [t.name for t in registry.for_scope("chat").langchain_tools()] == list(CHAT_TOOLS)
