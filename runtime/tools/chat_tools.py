"""The assistant's chat tools (scope ``chat``): calculator, clock, http_get, read_doc, ask_user.

Each is one ``RegisteredTool`` declaration: its description, arguments, read-only flag, the words
prose uses for it (the answer check) and its help line all live there.

Each tool raises ``ToolFailure`` with a message that is safe to show; the assistant's executor
turns any failure into an observation for the model, never into a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from urllib.parse import urljoin
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import httpx
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from reins.runtime.tools.calculator import CalculatorError, calculate
from reins.policies.tools.http_access import MAX_REDIRECTS, check_url, html_to_text, looks_like_html, normalise_whitespace, trim_text
from reins.runtime.tools.registry import RegisteredTool, ToolRegistry
from reins.runtime.resources import ResourceError, ResourceResolver, cut_for_prompt
from reins.runtime.config.settings import Settings, SettingsError

CHAT_SCOPE = "chat"
ASK_USER = "ask_user"
HTTP_MAX_BYTES = 256 * 1024
HTTP_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
READ_DOC_CHARS = 4000


class ToolFailure(Exception):
    """A tool could not do its job; ``str(error)`` is safe to show to the model and the user."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class CalculatorArgs(_Args):
    expression: str = Field(min_length=1, max_length=200, description="Arithmetic only, e.g. (17+25)*3")


class ClockArgs(_Args):
    timezone: str | None = Field(default=None, max_length=64, description="IANA name such as Europe/Paris; UTC if omitted")


class HttpGetArgs(_Args):
    url: str = Field(min_length=1, max_length=2000, description="Full http(s) URL on an allow-listed host")


class ReadDocArgs(_Args):
    uri: str = Field(min_length=1, max_length=300, description="Resource URI such as docs://versions/<plan>.md")


class AskUserArgs(_Args):
    question: str = Field(min_length=1, max_length=500, description="One clear question for the user")
    options: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]] | None = (
        Field(default=None, min_length=2, max_length=6, description="Optional 2-6 answers to choose from"))


# ------------------------------------------------------------------------------------ tools


def calculator(expression: str) -> str:
    try:
        return calculate(expression)
    except CalculatorError as error:
        raise ToolFailure(f"calculator refused: {error}") from None


def clock(timezone_name: str | None = None, *, now: Callable[[], datetime] | None = None) -> str:
    """The current time in ISO 8601 (seconds), UTC unless an IANA zone is given."""
    try:
        zone = ZoneInfo(timezone_name) if timezone_name else timezone.utc
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolFailure("unknown time zone; use an IANA name such as Europe/Paris") from None
    current = now() if now else datetime.now(timezone.utc)
    return current.astimezone(zone).isoformat(timespec="seconds")


class HttpGet:
    """GET an allow-listed URL; every redirect hop is checked against the allowlist again."""

    def __init__(
        self,
        allowlist: Callable[[], Sequence[str]],
        *,
        timeout: httpx.Timeout = HTTP_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ):
        self._allowlist = allowlist
        self._timeout = timeout
        self._transport = transport

    def __call__(self, url: str) -> str:
        allowlist = tuple(self._allowlist())
        # trust_env=False: no proxy from the environment may route around the allowlist.
        with httpx.Client(
            timeout=self._timeout, follow_redirects=False, trust_env=False, transport=self._transport
        ) as client:
            current = url
            for _hop in range(MAX_REDIRECTS + 1):
                decision = check_url(current, allowlist)
                if not decision.allowed:
                    raise ToolFailure(f"http_get refused: {decision.reason}")
                status, location, content_type, body = self._fetch(client, current)
                if location is not None:
                    current = urljoin(current, location)
                    continue
                if status >= 400:
                    raise ToolFailure(f"http_get: HTTP {status} from {decision.host}")
                if content_type and not content_type.startswith(("text/", "application/json", "application/xml")):
                    if not looks_like_html(content_type, body):
                        raise ToolFailure(f"http_get: {decision.host} returned non-text content ({content_type})")
                text = html_to_text(body) if looks_like_html(content_type, body) else normalise_whitespace(body)
                return trim_text(text or "(empty page)")
        raise ToolFailure(f"http_get: more than {MAX_REDIRECTS} redirects")

    def _fetch(self, client: httpx.Client, url: str) -> tuple[int, str | None, str, str]:
        try:
            with client.stream("GET", url, headers={"Accept": "text/html, text/plain, */*;q=0.5"}) as response:
                if response.is_redirect and response.headers.get("location"):
                    return response.status_code, response.headers["location"], "", ""
                content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size >= HTTP_MAX_BYTES:  # enough for 500 characters of text; stop reading
                        break
                raw = b"".join(chunks)[:HTTP_MAX_BYTES]
                body = raw.decode(response.encoding or "utf-8", errors="replace")
                return response.status_code, None, content_type, body
        except httpx.TimeoutException:
            raise ToolFailure("http_get: the request timed out") from None
        except httpx.HTTPError as error:
            raise ToolFailure(f"http_get: the request failed ({type(error).__name__})") from None


class ReadDoc:
    """Read a resource through the sandboxed resolver (docs://, demo://, project://)."""

    def __init__(self, resolver: Callable[[], ResourceResolver]):
        self._resolver = resolver

    def __call__(self, uri: str) -> str:
        try:
            resource = self._resolver().read(uri)
        except ResourceError as error:
            raise ToolFailure(f"read_doc: {error}") from None
        return cut_for_prompt(resource.text, READ_DOC_CHARS)


# ------------------------------------------------------------------------------------ registration


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except SettingsError as error:
        raise ToolFailure(f"configuration problem: {error}") from None


def register(
    registry: ToolRegistry,
    *,
    http_allowlist: Sequence[str] | None = None,
    docs_root=None,
    http_transport: httpx.BaseTransport | None = None,
) -> None:
    """Add the chat tools to ``registry``.

    The allowlist and docs root are read from the settings at call time unless given here, so a
    changed ``REINS_HTTP_ALLOWLIST`` applies without rebuilding the graph.
    """
    allowlist = (lambda: tuple(http_allowlist)) if http_allowlist is not None else (lambda: _settings().http_allowlist)
    resolver = (lambda: ResourceResolver(docs_root)) if docs_root is not None else (
        lambda: ResourceResolver(_settings().docs_root)
    )
    scopes = frozenset({CHAT_SCOPE})
    registry.register(
        RegisteredTool(
            name="calculator",
            description="Evaluate an arithmetic expression (numbers, + - * / // % ** and parentheses). "
            "Argument expression, e.g. '(17+25)*3'. Returns the number.",
            args_schema=CalculatorArgs,
            scopes=scopes,
            func=calculator,
            read_only=True,
            aliases=("calculator", "calc tool", "calculate tool", "计算器"),
            help="calculator  arithmetic, e.g. (17+25)*3",
            sinks=(),
        )
    )
    registry.register(
        RegisteredTool(
            name="clock",
            description="The current date and time in ISO 8601 format (YYYY-MM-DDTHH:MM:SS±HH:MM). "
            "Optional argument timezone, an IANA name; UTC if omitted.",
            args_schema=ClockArgs,
            scopes=scopes,
            func=lambda timezone=None: clock(timezone),
            read_only=True,
            aliases=("clock", "time tool", "时钟"),
            help="clock       the current date and time (optional IANA time zone)",
            sinks=(),
        )
    )
    registry.register(
        RegisteredTool(
            name="http_get",
            description="Fetch a web page by HTTP GET from an allow-listed host and return its first 500 "
            "characters of text (HTML stripped). Argument url, a full http(s) URL.",
            args_schema=HttpGetArgs,
            scopes=scopes,
            func=HttpGet(allowlist, transport=http_transport),
            read_only=True,
            aliases=("http_get", "http get", "http tool", "http request", "web request", "fetched", "网页"),
            help="http_get    the text of a page on an allow-listed host (REINS_HTTP_ALLOWLIST)",
            sinks=("url",),
            egress=("url",),  # a GET carries data out in its URL
        )
    )
    registry.register(
        RegisteredTool(
            name="read_doc",
            description="Read a project document by resource URI (docs://…, demo://…, project://latest-context) "
            "and return its text (cut when long). Argument uri.",
            args_schema=ReadDocArgs,
            scopes=scopes,
            func=ReadDoc(resolver),
            read_only=True,
            aliases=("read_doc", "read doc", "document tool", "doc tool", "文档工具"),
            help="read_doc    a project document by URI (docs://..., demo://..., project://latest-context)",
            sinks=("uri",),
        )
    )
    registry.register(
        RegisteredTool(
            name=ASK_USER,
            description="Ask the user one question when the request is ambiguous and you cannot go on "
            "without the answer; optional options: 2-6 short answers to choose from. The answer comes back "
            "as the observation.",
            args_schema=AskUserArgs,
            scopes=scopes,
            read_only=True,
            approval="question",
            aliases=("ask_user", "asked you", "asked the user"),
            help="ask_user    a question when the request is ambiguous; the turn pauses",
            sinks=(),
        )
    )
