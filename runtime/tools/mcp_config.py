"""The user's MCP configuration, checked (pure): the ``{"mcpServers": {...}}`` format MCP hosts share.

A server is stdio (``command``, ``args``, ``env``, ``cwd``) or streamable HTTP (``url``, ``headers``);
optional ``tools`` (only these are offered), ``timeout_s`` (a call's deadline, default 30),
``startup_timeout_s`` (the deadline to start and list its tools, default 60, apart from a call's),
``trust`` (tools that run without approval) and ``trust_annotations`` (believe the server's
``readOnlyHint``; off by default: every tool of the server asks first). Each tool is offered as
``<server>__<tool>``; a name a provider would refuse or that clashes is a configuration error naming
the server. A server is untrusted input: its descriptions are neutralised and capped here.

Files written for other hosts are read too: ``disabled: true`` (or ``enabled: false``) leaves the
server out, ``autoApprove`` / ``alwaysAllow`` (Cline, Roo Code) join the ``trust`` list with a
one-line notice, and any other field is ignored with a notice instead of refusing to start.
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
                          "trust_annotations", "transport", "type", "disabled", "enabled", "startup_timeout_s"})
# Other hosts' per-tool "run without asking" lists: read as ``trust``, always said out loud.
_AUTO_APPROVE_KEYS = ("autoApprove", "alwaysAllow")
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
    trust_annotations: bool = False
    notices: tuple[str, ...] = ()  # one line each: what was read differently from how it was written

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
    notices = []
    unknown = sorted(set(raw) - _SERVER_KEYS - set(_AUTO_APPROVE_KEYS), key=str)
    if unknown:
        notices.append(f"MCP server {name!r}: field(s) {neutral(', '.join(map(str, unknown)), 120)} ignored "
                       "(not used by Reins)")
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
    trust = set(_strings(raw.get("trust", []), "trust", name))
    for key in _AUTO_APPROVE_KEYS:
        if key in raw:
            approved = _strings(raw[key], key, name)
            if set(approved) - trust:
                shown = neutral(", ".join(sorted(set(approved) - trust)), 120)
                notices.append(f"MCP server {name!r}: {key} read as trust: {shown} run(s) without asking first")
            trust.update(approved)
    trust_annotations = raw.get("trust_annotations", False)
    if not isinstance(trust_annotations, bool):
        raise McpConfigError(f"MCP server {name!r}: trust_annotations must be true or false")
    return ServerSpec(name, connection, tools, timeout, frozenset(trust), startup, trust_annotations, tuple(notices))


def _disabled(name: Any, raw: Any) -> bool:
    """Whether another host's switch leaves the server out (``disabled: true`` / ``enabled: false``)."""
    if not isinstance(raw, Mapping):
        return False
    for key, off in (("disabled", True), ("enabled", False)):
        if key in raw and not isinstance(raw[key], bool):
            raise McpConfigError(f"MCP server {str(name)[:40]!r}: {key} must be true or false")
        if key in raw and raw[key] is off:
            return True
    return False


@dataclass(frozen=True)
class McpServers:
    """The configuration as read: the servers to start, the ones left out (disabled), and the
    notices about fields read differently or ignored (one line each)."""

    servers: tuple[ServerSpec, ...]
    disabled: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()


def read_servers(config: Any) -> McpServers:
    """``{"mcpServers": {...}}`` checked; ``McpConfigError`` names what is wrong."""
    if not isinstance(config, Mapping) or not isinstance(config.get("mcpServers"), Mapping):
        raise McpConfigError('the MCP configuration must be a JSON object {"mcpServers": {"<name>": {...}}}')
    notices = []
    extra = sorted(set(config) - {"mcpServers"}, key=str)
    if extra:
        notices.append(f"the MCP configuration's field(s) {neutral(', '.join(map(str, extra)), 120)} ignored "
                       "(not used by Reins)")
    disabled = tuple(str(name) for name, raw in config["mcpServers"].items() if _disabled(name, raw))
    servers = tuple(_server(name, raw) for name, raw in config["mcpServers"].items() if name not in disabled)
    notices += [notice for spec in servers for notice in spec.notices]
    return McpServers(servers, disabled, tuple(notices))


def _seconds(raw: Mapping[str, Any], key: str, default: float, server: str) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT_S:
        raise McpConfigError(f"MCP server {server!r}: {key} must be a number of seconds in (0, {MAX_TIMEOUT_S:g}]")
    return float(value)


def parse_config(config: Any) -> tuple[ServerSpec, ...]:
    """The servers to start of ``{"mcpServers": {...}}``, checked; ``McpConfigError`` names what is wrong."""
    return read_servers(config).servers


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
    """Server text made inert for a model: no control characters, no angle brackets (no prompt
    tags), one line, at most ``limit`` characters."""
    return readable(text, limit).replace("<", "‹").replace(">", "›")


def readable(text: str, limit: int) -> str:
    """Server text for a person (a help line): no control characters, one line, at most ``limit``
    characters; a placeholder such as ``<name>`` stays as written."""
    flat = " ".join(_CONTROL.sub(" ", text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def shown_description(server: str, description: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    """A server's tool description as the model sees it: marked as the server's words, inert, capped."""
    return f"[MCP server {server!r}, untrusted description] {neutral(description, limit) or '(none)'}"

