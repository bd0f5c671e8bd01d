"""The user's MCP configuration, checked (pure): the ``{"mcpServers": {...}}`` format MCP hosts share.

A server is stdio (``command``, ``args``, ``env``, ``cwd``) or streamable HTTP (``url``, ``headers``);
optional ``tools`` (only these are offered), ``timeout_s`` (a call's deadline, default 30),
``startup_timeout_s`` (the deadline to start and list its tools, default 60, apart from a call's) and
``trust`` (tools that run without approval although not marked read-only). Each tool is offered as
``<server>__<tool>``; a name a provider would refuse or that clashes is a configuration error naming
the server. A server is untrusted input: its descriptions are neutralised and capped here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_STARTUP_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 600.0
MAX_DESCRIPTION_CHARS = 300
SEPARATOR = "__"
OFFERED_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SERVER_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "tools", "timeout_s", "trust",
                          "transport", "type", "startup_timeout_s"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")  # incl. bidi overrides


class McpConfigError(ValueError):
    """The MCP configuration is invalid; the message names the server and is safe to show."""


@dataclass(frozen=True)
class ServerSpec:
    name: str
    connection: Mapping[str, Any]  # what langchain-mcp-adapters connects with
    tools: tuple[str, ...] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    trust: frozenset[str] = frozenset()
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S

    @property
    def transport(self) -> str:
        return str(self.connection["transport"])


def _strings(value: Any, what: str, server: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise McpConfigError(f"MCP server {server!r}: {what} must be a list of strings")
    return tuple(value)


def _string_map(value: Any, what: str, server: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise McpConfigError(f"MCP server {server!r}: {what} must map names to strings")
    return dict(value)


def _server(name: Any, raw: Any) -> ServerSpec:
    if not isinstance(name, str) or not OFFERED_NAME.fullmatch(name) or SEPARATOR in name or len(name) > 30:
        raise McpConfigError(f"MCP server name {str(name)[:40]!r} must be 1-30 letters, digits, _ or - (no '__')")
    if not isinstance(raw, Mapping):
        raise McpConfigError(f"MCP server {name!r}: its entry must be an object")
    unknown = sorted(set(raw) - _SERVER_KEYS)
    if unknown:
        raise McpConfigError(f"MCP server {name!r}: unknown field(s) {', '.join(map(str, unknown))}")
    if ("command" in raw) == ("url" in raw):
        raise McpConfigError(f"MCP server {name!r}: give either command (stdio) or url (streamable HTTP)")
    if "command" in raw:
        if not isinstance(raw["command"], str) or not raw["command"].strip():
            raise McpConfigError(f"MCP server {name!r}: command must be a non-empty string")
        connection: dict[str, Any] = {"transport": "stdio", "command": raw["command"],
                                      "args": list(_strings(raw.get("args", []), "args", name))}
        if "env" in raw:
            connection["env"] = _string_map(raw["env"], "env", name)
        if "cwd" in raw:
            connection["cwd"] = str(raw["cwd"])
    else:
        url = raw["url"]
        if not isinstance(url, str) or not re.match(r"^https?://[^\s]+$", url):
            raise McpConfigError(f"MCP server {name!r}: url must be an http(s) URL")
        connection = {"transport": "streamable_http", "url": url}
        if "headers" in raw:
            connection["headers"] = _string_map(raw["headers"], "headers", name)
    timeout = _seconds(raw, "timeout_s", DEFAULT_TIMEOUT_S, name)
    startup = _seconds(raw, "startup_timeout_s", DEFAULT_STARTUP_TIMEOUT_S, name)
    tools = _strings(raw["tools"], "tools", name) if "tools" in raw else None
    trust = frozenset(_strings(raw.get("trust", []), "trust", name))
    return ServerSpec(name, connection, tools, timeout, trust, startup)


def _seconds(raw: Mapping[str, Any], key: str, default: float, server: str) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT_S:
        raise McpConfigError(f"MCP server {server!r}: {key} must be a number of seconds in (0, {MAX_TIMEOUT_S:g}]")
    return float(value)


def parse_config(config: Any) -> tuple[ServerSpec, ...]:
    """The servers of ``{"mcpServers": {...}}``, checked; ``McpConfigError`` names what is wrong."""
    if not isinstance(config, Mapping) or not isinstance(config.get("mcpServers"), Mapping):
        raise McpConfigError('the MCP configuration must be a JSON object {"mcpServers": {"<name>": {...}}}')
    extra = sorted(set(config) - {"mcpServers"})
    if extra:
        raise McpConfigError(f"the MCP configuration has unknown field(s) {', '.join(map(str, extra))}")
    return tuple(_server(name, raw) for name, raw in config["mcpServers"].items())


def offered_name(server: str, tool: str) -> str:
    return f"{server}{SEPARATOR}{tool}"


@dataclass(frozen=True)
class OfferedTools:
    """A server's tools as offered: ``names`` maps each kept tool to its offered name; ``dropped``
    lists the tools left out and why (one line each)."""

    names: Mapping[str, str]
    dropped: tuple[str, ...] = ()


def offer(spec: ServerSpec, listed: Iterable[str], taken: Iterable[str] = ()) -> OfferedTools:
    """Which of a server's listed tools are offered, under which names.

    A tool outside the server's ``tools`` list is left out silently; a name a provider would refuse
    is dropped with a line saying so; a name clashing with one already taken is a configuration
    error naming the server.
    """
    wanted = set(spec.tools) if spec.tools is not None else None
    names: dict[str, str] = {}
    dropped = []
    seen = set(taken)
    for tool in listed:
        if wanted is not None and tool not in wanted:
            continue
        name = offered_name(spec.name, tool)
        if not OFFERED_NAME.fullmatch(name):
            dropped.append(f"tool {neutral(tool, 40)!r} of MCP server {spec.name!r} left out: its name "
                           "would not match ^[A-Za-z0-9_-]{1,64}$")
            continue
        if name in seen:
            raise McpConfigError(f"MCP server {spec.name!r}: tool name {name!r} clashes with another tool")
        seen.add(name)
        names[tool] = name
    return OfferedTools(names, tuple(dropped))


def neutral(text: str, limit: int) -> str:
    """Server text made inert: no control characters, no angle brackets (no prompt tags), one
    line, at most ``limit`` characters."""
    flat = " ".join(_CONTROL.sub(" ", text or "").split()).replace("<", "‹").replace(">", "›")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def shown_description(server: str, description: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    """A server's tool description as the model sees it: marked as the server's words, inert, capped."""
    return f"[MCP server {server!r}, untrusted description] {neutral(description, limit) or '(none)'}"


def is_read_only(annotations: Mapping[str, Any] | None) -> bool:
    """Only an explicit ``readOnlyHint: true`` makes an MCP tool read-only."""
    return bool(annotations) and annotations.get("readOnlyHint") is True
