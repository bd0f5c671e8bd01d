"""The user's own tools from MCP servers, through ``langchain-mcp-adapters`` (``MultiServerMCPClient``).

Loaded once per configuration: each server is asked for its tools within its ``startup_timeout_s``
(a slow start is not a slow call: each call has its own ``timeout_s``); a
server that fails to start is reported in one line (its cause, its command and the log holding its
output; never its ``env`` or ``headers`` values) and left out, so the assistant keeps running
without it. Each tool becomes a chat-scope ``RegisteredTool`` named ``<server>__<tool>`` whose
approval trait comes from the user's word alone (``reins.policies.tools.approval``): a server's own
``readOnlyHint`` counts only under ``trust_annotations``. Calls go to one session per server per
chat (``reins.runtime.tools.mcp_sessions``), all of it off the caller's event loop.
"""

from __future__ import annotations

import atexit
import json
import shlex
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reins.runtime.tools.mcp_config import (
    McpConfigError,
    ServerSpec,
    neutral,
    readable,
    offer,
    read_servers,
    shown_description,
)
from reins.policies.text.redaction import redact, redact_secrets
from reins.policies.tools.approval import Approval, mcp_approval, mcp_read_only
from reins.runtime.config.files import FileRefused, read_bounded_text
from reins.runtime.execution.deadline import DeadlineExceeded
from reins.runtime.tools.mcp_sessions import McpSessions, SessionHost, pooled_call
from reins.runtime.tools.registry import RegisteredTool

MAX_CONFIG_BYTES = 256 * 1024
MCP_CONFIG_ENV = "REINS_MCP_CONFIG"
McpSource = str | Path | Mapping[str, Any] | None

__all__ = ["McpConfigError", "McpToolset", "ServerReport", "load_mcp_tools", "read_config"]


@dataclass(frozen=True)
class ServerReport:
    """One configured server as ``reins doctor`` shows it: its tools (offered name, approval trait),
    or the one-line cause it could not start with its command (secrets redacted) and its log."""

    name: str
    transport: str
    tools: tuple[tuple[str, Approval], ...] = ()
    problem: str = ""
    notes: tuple[str, ...] = ()
    command: str = ""
    log: str = ""

    def problem_line(self) -> str:
        """Why it cannot start, what was run and where its output went (one line)."""
        where = f"; command: {self.command}" if self.command else ""
        return f"{self.problem}{where}; its output: {self.log}" if self.log else f"{self.problem}{where}"


@dataclass(frozen=True)
class McpToolset:
    tools: tuple[RegisteredTool, ...] = ()
    servers: tuple[ServerReport, ...] = ()
    disabled: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()  # fields read differently or ignored, one line each


EMPTY = McpToolset()


def read_config(source: McpSource) -> Mapping[str, Any] | None:
    """The configuration from a path (JSON file) or a mapping; None when there is none."""
    if source is None or isinstance(source, Mapping):
        return source
    try:
        text = read_bounded_text(source, variable=MCP_CONFIG_ENV, limit=MAX_CONFIG_BYTES)
    except FileRefused as error:
        raise McpConfigError(str(error)) from None
    try:
        return json.loads(text)
    except ValueError:
        raise McpConfigError(f"{_origin(source)}: not valid JSON") from None


def _origin(source: McpSource) -> str:
    return f"{MCP_CONFIG_ENV}: {Path(str(source)).name}"


def _servers_of(source: McpSource, config: Mapping[str, Any]) -> Any:
    """``read_servers``; a file's problem names the variable and the file before the field."""
    try:
        return read_servers(config)
    except McpConfigError as error:
        if isinstance(source, Mapping):
            raise
        raise McpConfigError(f"{_origin(source)}: {error}") from None


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


SERVER_LOG = "mcp-servers.log"  # in the home for runs (``reins.runtime.persistence.home``)
_log: list[Any] = []


def _route_server_stderr() -> None:
    """Send stdio servers' own stderr to ``mcp-servers.log`` in ``REINS_HOME``, as MCP hosts keep server logs.

    The adapters take no ``errlog``, and the SDK's default is the ``sys.stderr`` of the moment it
    was imported: a notebook's or a test's stream without a file descriptor makes every stdio
    server fail to start, and in a terminal a server's logging would interleave with the chat.
    Runs on the session host's thread (its first act), never on a caller's event loop.
    """
    if _log:
        return
    import os

    from mcp.client import stdio

    from reins.runtime.persistence.home import home_file

    try:
        path = home_file(SERVER_LOG)
        _log.append(open(path, "a", encoding="utf-8"))  # noqa: SIM115 - open for the process's life
    except OSError:  # an unwritable home: the servers' output is dropped, they still start
        path = Path(os.devnull)
        _log.append(open(path, "a", encoding="utf-8"))  # noqa: SIM115
    _log.append(str(path))
    opener = getattr(stdio.stdio_client, "__wrapped__", stdio.stdio_client)  # under @asynccontextmanager
    opener.__defaults__ = (_log[0],)


SESSIONS = McpSessions(SessionHost(on_start=_route_server_stderr))
atexit.register(SESSIONS.close_all)  # a chat's stdio servers stop with it


def server_log() -> str:
    """Where stdio servers' own output goes ("" before any server started)."""
    return _log[1] if len(_log) > 1 else ""


def shown_command(spec: ServerSpec) -> str:
    """A stdio server's command line as a person can retype it, its env and header values redacted;
    an HTTP server's URL."""
    if spec.transport != "stdio":
        text = str(spec.connection.get("url", ""))
    else:
        text = shlex.join([str(spec.connection["command"]), *map(str, spec.connection.get("args", []))])
    for secret in _secrets(spec):
        text = text.replace(secret, "***")
    return neutral(redact_secrets(text), 300)


async def _list_tools(spec: ServerSpec) -> list[Any]:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    client = MultiServerMCPClient({spec.name: dict(spec.connection)},  # type: ignore[dict-item]
                                  tool_interceptors=[pooled_call(SESSIONS, spec)])
    return await client.get_tools(server_name=spec.name)


def _declare(spec: ServerSpec, tool: Any, offered: str, scope: str) -> RegisteredTool:
    description = shown_description(spec.name, tool.description or "")
    approval = mcp_approval(tool.name, tool.metadata, trust=spec.trust, trust_annotations=spec.trust_annotations)
    return RegisteredTool(
        name=offered,
        description=description,
        args_schema=tool.args_schema if isinstance(tool.args_schema, dict) else tool.tool_call_schema.model_json_schema(),
        scopes=frozenset({scope}),
        tool=tool.model_copy(update={"name": offered, "description": description}),
        server=spec.name,
        read_only=mcp_read_only(tool.metadata, trust_annotations=spec.trust_annotations),
        approval=approval,
        timeout_s=spec.timeout_s,
        aliases=(offered,),
        help=f"{offered}  {readable(tool.description or '', 80)}",
    )


def _load_server(spec: ServerSpec, scope: str, taken: set[str]) -> tuple[list[RegisteredTool], ServerReport]:
    try:
        listed = SESSIONS.host.run_blocking(_list_tools(spec), spec.startup_timeout_s)
    except Exception as error:  # any failure to start is the server's problem, not the assistant's
        log = server_log() if spec.transport == "stdio" else ""
        return [], ServerReport(spec.name, spec.transport, problem=cause_line(error, spec),
                                command=shown_command(spec), log=log)
    by_name = {tool.name: tool for tool in listed}
    offered = offer(spec, by_name, taken)  # McpConfigError on a clash: the configuration is wrong
    taken.update(offered.names.values())
    tools = [_declare(spec, by_name[name], offered_as, scope) for name, offered_as in offered.names.items()]
    report = ServerReport(spec.name, spec.transport, tuple((t.name, t.trait) for t in tools), notes=offered.dropped)
    return tools, report


_cache: dict[str, McpToolset] = {}
_lock = threading.Lock()


def load_mcp_tools(source: McpSource, *, scope: str = "chat", reserved: tuple[str, ...] = ()) -> McpToolset:
    """Every configured server's tools (``McpConfigError`` for an invalid configuration); one
    load per configuration and process. ``reserved``: names already taken (the built-in tools).
    Blocking (a file read, servers started): under an event loop, call it in a worker thread."""
    if source is None:
        return EMPTY
    # A file is read once per process: later runs' lookups touch no file (an event loop may be running).
    named = dict(source) if isinstance(source, Mapping) else str(Path(source).expanduser())
    key = json.dumps([named, scope, reserved], sort_keys=True, default=str)
    with _lock:
        if key in _cache:
            return _cache[key]
        config = read_config(source)
        if config is None:
            return EMPTY
        read = _servers_of(source, config)
        taken = set(reserved)
        tools: list[RegisteredTool] = []
        reports = []
        for spec in read.servers:
            loaded, report = _load_server(spec, scope, taken)
            tools.extend(loaded)
            reports.append(report)
        _cache[key] = McpToolset(tuple(tools), tuple(reports), read.disabled, read.notices)
        return _cache[key]
