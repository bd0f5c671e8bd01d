"""Running one chat tool call: LangGraph's ``ToolNode`` with Reins' rules around it.

``ToolNode`` executes the call (built-in functions and MCP tools alike) and turns the tool's own
failures into observations (``handle_tool_errors``). Its ``awrap_tool_call`` adds what Reins needs:
the call's deadline, any other failure (a crashed server) classified and turned into an
observation, and the output redacted and capped before anything stores it. A tool never crashes
the assistant.
"""

import asyncio
import contextvars
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import DEFAULT_RUNTIME, get_runtime
from pydantic import ValidationError

from reins.policies.text.redaction import redact
from reins.policies.tools.calls import DEADLINE, TOOL_ERROR
from reins.runtime.tools.chat_tools import ToolFailure
from reins.runtime.llm.failures import tool_failure_text
from reins.runtime.llm.failures import tool_failure_kind
from reins.runtime.tools.mcp_sessions import QuestionLost, QuestionTaken, ServerQuestion, call_key, call_meta, question_reply
from reins.runtime.tools.registry import RegisteredTool
from reins.runtime.execution.run_ledger import admit_tool_call
from reins.runtime.tools.run_scope import TURN_CONTEXT_KEY

OBSERVATION_CHARS = 4000
QUESTION_LOST = "question_lost"  # a reply for a call no longer waiting in this process
QUESTION_TAKEN = "question_taken"  # a reply to a question another resume answered first
MAX_ISSUES = 8


# ------------------------------------------------------------------------------------ arguments


def arg_issues(tool: RegisteredTool, args: Any) -> list[dict[str, str]]:
    """``{path, code}`` for every way ``args`` break the tool's schema (none when they fit)."""
    if not isinstance(args, Mapping):
        return [{"path": "args", "code": "not_an_object"}]
    schema = tool.args_schema
    if isinstance(schema, dict):
        try:
            errors = sorted(Draft202012Validator(schema).iter_errors(dict(args)), key=lambda e: list(e.path))
        except Exception:  # a schema the validator cannot use: leave the check to the server
            return []
        issues: dict[tuple[str, str], dict[str, str]] = {}  # each problem once, in path order
        for e in errors:
            path = ".".join(["args", *map(str, e.path)])
            # jsonschema reports one ``required`` error per missing field, each carrying the whole
            # list: name each missing field, and only once.
            if e.validator == "required" and isinstance(e.instance, Mapping):
                found = [(f"{path}.{name}", "missing") for name in e.validator_value if name not in e.instance]
            else:
                found = [(path, str(e.validator))]
            for key in found:
                issues.setdefault(key, {"path": key[0], "code": key[1]})
        return list(issues.values())[:MAX_ISSUES]
    try:
        schema.model_validate(dict(args))
    except ValidationError as error:
        return [{"path": ".".join(["args", *map(str, e.get("loc", ()))]), "code": str(e.get("type"))}
                for e in error.errors()][:MAX_ISSUES]
    return []


def digest(args: Mapping[str, Any]) -> str:
    """A short fingerprint of a call's arguments for the trace (never the arguments themselves)."""
    import hashlib

    encoded = json.dumps(dict(args), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()[:10]


# ------------------------------------------------------------------------------------ execution


@dataclass(frozen=True)
class CallResult:
    ok: bool
    output: str
    failure: str = ""  # deadline | connection | tool_error | budget_cap, when not ok
    started_at: float = 0.0
    duration_ms: int = 0
    # The call waits for the person's answer to its server's question: {server, message, schema}.
    question: Mapping[str, Any] | None = None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # MCP content blocks
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


def tool_error_text(error: ToolFailure | ToolException) -> str:
    """``handle_tool_errors``: a tool's own failure, already safe to show."""
    return str(error)


def _capped(message: ToolMessage) -> ToolMessage:
    text = _text(message.content)[: OBSERVATION_CHARS * 2]  # cut before redacting a 1 MB answer
    return message.model_copy(update={"content": redact(text, OBSERVATION_CHARS), "artifact": None})


def redacting_wrapper(timeout_s: float) -> Callable[..., Awaitable[ToolMessage]]:
    """``awrap_tool_call``: a deadline, any escaping failure as an observation, a capped and
    redacted output."""

    async def wrap(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[Any]]) -> ToolMessage:
        call = request.tool_call
        try:
            message = await asyncio.wait_for(execute(request), timeout_s)
        except ServerQuestion as asked:  # the call goes on on the MCP host; the node pauses with this
            return ToolMessage(content="", tool_call_id=call["id"], name=call["name"],
                               additional_kwargs={"question": {"server": asked.server, "message": asked.message,
                                                               "schema": asked.schema}})
        except QuestionTaken as taken:  # a racing resume answered first: this one must not record the call too
            return ToolMessage(content=str(taken), tool_call_id=call["id"], name=call["name"], status="error",
                               additional_kwargs={"failure": QUESTION_TAKEN})
        except QuestionLost as lost:
            return ToolMessage(content=f"{call['name']}: {lost}", tool_call_id=call["id"], name=call["name"],
                               status="error", additional_kwargs={"failure": QUESTION_LOST})
        except TimeoutError:
            return ToolMessage(content=f"{call['name']} gave no result within {timeout_s:g} s (deadline)",
                               tool_call_id=call["id"], name=call["name"], status="error",
                               additional_kwargs={"failure": DEADLINE})
        except Exception as error:  # a crashed server or a broken tool is an observation
            return ToolMessage(content=tool_failure_text(call["name"], error), tool_call_id=call["id"],
                               name=call["name"], status="error", additional_kwargs={"failure": tool_failure_kind(error)})
        return _capped(message)

    return wrap


@dataclass(frozen=True)
class RunTool:
    """A request (``reins.runtime.execution.calls``) to run one call of ``tool`` through a ``ToolNode``."""

    tool: RegisteredTool
    args: Mapping[str, Any]
    config: Mapping[str, Any] = field(default_factory=dict)
    call_id: str = "call"
    # The calling node's runtime (its context: whose memory a memory tool reads); else the running one.
    runtime: Any = None
    # Extra ``_meta`` of an MCP call (an approved call's idempotency key); nothing for other tools.
    meta: Mapping[str, Any] | None = None
    # An MCP call's key, stable when its node re-runs (the call it names is found again, not re-sent),
    # and the reply to the question that call waits on.
    key: str | None = None
    reply: Mapping[str, Any] | None = None

    def _node(self) -> ToolNode:
        return ToolNode([self.tool.as_langchain_tool()], handle_tool_errors=tool_error_text,
                        awrap_tool_call=redacting_wrapper(self.tool.timeout_s))

    def _runtime(self) -> Any:
        """The node's runtime, handed to ``ToolNode`` by argument: the one the node was given, else
        the running node's (LangGraph's public ``get_runtime``); outside a graph, the default."""
        if self.runtime is not None:
            return self.runtime
        try:
            return get_runtime() or DEFAULT_RUNTIME
        except RuntimeError:  # not inside a runnable context
            return DEFAULT_RUNTIME

    async def arun(self) -> CallResult:
        admit_tool_call(self.tool.timeout_s)  # refused before it runs when it (to its deadline) would pass a cap
        started, clock = time.time(), time.perf_counter()
        call = {"name": self.tool.name, "args": dict(self.args), "id": self.call_id, "type": "tool_call"}
        runtime = self._runtime()
        config = dict(self.config)
        if self.runtime is not None:  # the tool reads whose run it serves from the config (runtime.tools.run_scope)
            config["configurable"] = {**(config.get("configurable") or {}), TURN_CONTEXT_KEY: runtime.context}
        tokens = (call_meta.set(dict(self.meta) if self.meta else None), call_key.set(self.key),
                  question_reply.set(dict(self.reply) if self.reply is not None else None))
        try:
            output = await self._node().ainvoke({"messages": [AIMessage(content="", tool_calls=[call])]}, config,
                                                runtime=runtime)
        finally:
            for var, token in zip((call_meta, call_key, question_reply), tokens):
                var.reset(token)  # type: ignore[attr-defined]
        message: ToolMessage = output["messages"][-1]
        if question := message.additional_kwargs.get("question"):
            return CallResult(True, "", started_at=started, question=question)
        ok = message.status != "error"
        failure = "" if ok else str(message.additional_kwargs.get("failure", TOOL_ERROR))
        text = message.content if isinstance(message.content, str) else _text(message.content)
        return CallResult(ok, redact(text, OBSERVATION_CHARS) if not ok else text, failure, started,
                          int((time.perf_counter() - clock) * 1000))

    def run(self) -> CallResult:
        """The sync path (``graph.invoke``): MCP tools are async, so the call gets an event loop —
        its own thread's when a loop already runs here (a notebook cell)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.arun())
        context = contextvars.copy_context()
        with ThreadPoolExecutor(1, thread_name_prefix="reins-tool") as pool:
            return pool.submit(context.run, lambda: asyncio.run(self.arun())).result()
