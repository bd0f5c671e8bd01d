"""The user's own tools from MCP servers, through ``langchain-mcp-adapters`` (``MultiServerMCPClient``).

Loaded once per configuration: each server is asked for its tools within its ``startup_timeout_s``
(a slow start is not a slow call: each call has its own ``timeout_s``); a
server that fails to start is reported in one line (its cause, redacted, never its ``env`` or
``headers`` values) and left out, so the assistant keeps running without it. Each tool becomes a
chat-scope ``RegisteredTool`` named ``<server>__<tool>``, read-only only when the server marks it
``readOnlyHint``; the adapters open a fresh session for every call, so a crashed server costs one
failed call, not the assistant.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policies.mcp_config import (
    McpConfigError,
    ServerSpec,
    is_read_only,
    neutral,
    offer,
    parse_config,
    shown_description,
)
from policies.redaction import redact
from runtime.deadline import DeadlineExceeded, call_with_deadline
from runtime.registry import RegisteredTool

MAX_CONFIG_BYTES = 256 * 1024
McpSource = str | Path | Mapping[str, Any] | None

__all__ = ["McpConfigError", "McpToolset", "ServerReport", "load_mcp_tools", "read_config"]


@dataclass(frozen=True)
class ServerReport:
    """One configured server as ``reins doctor`` shows it: its tools (offered name, read-only), or
    the one-line cause it could not start."""

    name: str
    transport: str
    tools: tuple[tuple[str, bool], ...] = ()
    problem: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class McpToolset:
    tools: tuple[RegisteredTool, ...] = ()
    servers: tuple[ServerReport, ...] = ()


EMPTY = McpToolset()


def read_config(source: McpSource) -> Mapping[str, Any] | None:
    """The configuration from a path (JSON file) or a mapping; None when there is none."""
    if source is None or isinstance(source, Mapping):
        return source
    path = Path(source).expanduser()
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise McpConfigError(f"cannot read the MCP configuration {path.name!r}: {error.strerror or 'unreadable'}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise McpConfigError(f"the MCP configuration {path.name!r} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise McpConfigError(f"the MCP configuration {path.name!r} is not valid JSON") from None


def _secrets(spec: ServerSpec) -> list[str]:
    values = [*spec.connection.get("env", {}).values(), *spec.connection.get("headers", {}).values()]
    return sorted((v for v in values if len(v) >= 4), key=len, reverse=True)


def _leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:  # anyio task groups wrap the cause
        error = error.exceptions[0]
    return error


def cause_line(error: BaseException, spec: ServerSpec, limit: int = 200) -> str:
    """Why a server could not start: one redacted line without its env/header values."""
    leaf = _leaf(error)
    if isinstance(leaf, (DeadlineExceeded, TimeoutError)):
        text = f"did not start within {spec.startup_timeout_s:g} s"
    else:
        text = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
    for secret in _secrets(spec):
        text = text.replace(secret, "***")
    return redact(" ".join(text.split()), limit)


SERVER_LOG = "mcp-servers.log"  # in the home for runs (``runtime.home``)
_log: list[Any] = []


def _route_server_stderr() -> None:
    """Send stdio servers' own stderr to ``mcp-servers.log`` in ``REINS_HOME``, as MCP hosts keep server logs.

    The adapters take no ``errlog``, and the SDK's default is the ``sys.stderr`` of the moment it
    was imported: a notebook's or a test's stream without a file descriptor makes every stdio
    server fail to start, and in a terminal a server's logging would interleave with the chat.
    """
    if _log:
        return
    from mcp.client import stdio

    from runtime.home import home_file

    _log.append(open(home_file(SERVER_LOG), "a", encoding="utf-8"))  # noqa: SIM115 - open for the process's life
    opener = getattr(stdio.stdio_client, "__wrapped__", stdio.stdio_client)  # under @asynccontextmanager
    opener.__defaults__ = (_log[0],)


async def _list_tools(spec: ServerSpec) -> list[Any]:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    client = MultiServerMCPClient({spec.name: dict(spec.connection)})  # type: ignore[dict-item]
    return await client.get_tools(server_name=spec.name)


def _declare(spec: ServerSpec, tool: Any, offered: str, scope: str) -> RegisteredTool:
    description = shown_description(spec.name, tool.description or "")
    read_only = is_read_only(tool.metadata)
    return RegisteredTool(
        name=offered,
        description=description,
        args_schema=tool.args_schema if isinstance(tool.args_schema, dict) else tool.tool_call_schema.model_json_schema(),
        scopes=frozenset({scope}),
        tool=tool.model_copy(update={"name": offered, "description": description}),
        server=spec.name,
        read_only=read_only,
        trusted=tool.name in spec.trust,
        timeout_s=spec.timeout_s,
        aliases=(offered,),
        help=f"{offered}  {neutral(tool.description or '', 80)}" + ("" if read_only else " (asks before it runs)"),
    )


def _load_server(spec: ServerSpec, scope: str, taken: set[str]) -> tuple[list[RegisteredTool], ServerReport]:
    try:
        listed = call_with_deadline(lambda: asyncio.run(_list_tools(spec)), spec.startup_timeout_s,
                                     name=f"mcp-{spec.name}")
    except Exception as error:  # any failure to start is the server's problem, not the assistant's
        return [], ServerReport(spec.name, spec.transport, problem=cause_line(error, spec))
    by_name = {tool.name: tool for tool in listed}
    offered = offer(spec, by_name, taken)  # McpConfigError on a clash: the configuration is wrong
    taken.update(offered.names.values())
    tools = [_declare(spec, by_name[name], offered_as, scope) for name, offered_as in offered.names.items()]
    report = ServerReport(spec.name, spec.transport, tuple((t.name, t.read_only) for t in tools), notes=offered.dropped)
    return tools, report


_cache: dict[str, McpToolset] = {}
_lock = threading.Lock()


def load_mcp_tools(source: McpSource, *, scope: str = "chat", reserved: tuple[str, ...] = ()) -> McpToolset:
    """Every configured server's tools (``McpConfigError`` for an invalid configuration); one
    load per configuration and process. ``reserved``: names already taken (the built-in tools)."""
    config = read_config(source)
    if config is None:
        return EMPTY
    specs = parse_config(config)
    key = json.dumps([config, scope, reserved], sort_keys=True, default=str)
    with _lock:
        if key in _cache:
            return _cache[key]
        _route_server_stderr()
        taken = set(reserved)
        tools: list[RegisteredTool] = []
        reports = []
        for spec in specs:
            loaded, report = _load_server(spec, scope, taken)
            tools.extend(loaded)
            reports.append(report)
        _cache[key] = McpToolset(tuple(tools), tuple(reports))
        return _cache[key]
