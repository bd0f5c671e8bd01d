"""Helpers for the assistant graph tests: scripted turns and a runner around the graph."""

from __future__ import annotations

import itertools
import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel, ConfigDict

from reins.graphs.assistant import build_graph
from reins.runtime.tools import chat_tools
from reins.runtime.llm.models import ModelSet
from reins.runtime.tools.registry import RegisteredTool, ToolRegistry
from reins.runtime.standins.scripted import ScriptedModel

CHAT_TOOLS = ("calculator", "clock", "http_get", "read_doc", "ask_user")
_ids = itertools.count(1)


def summaries(result: dict, step: str) -> list[str]:
    """The trace summaries of the turn's steps with this id (``propose-1`` …, ``tool-1`` …: a prefix)."""
    return [r["summary"] for r in result["trace"] if r["step"] == step or r["step"].startswith(f"{step}-")]


def tool_call(tool: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": tool, "args": args, "id": f"call_{next(_ids)}", "type": "tool_call"}])


def done(text: str = "done") -> AIMessage:
    return AIMessage(content=text)


def qa(reason: str = "chat") -> dict:
    return {"intent": "QA", "reason": reason, "plan": None}


def simple(reason: str = "one call") -> dict:
    return {"intent": "SIMPLE_TOOL", "reason": reason, "plan": None}


def complex_(*tools: str) -> dict:
    steps = [{"id": i, "tool": tool, "purpose": f"use {tool}"} for i, tool in enumerate(tools, start=1)]
    return {"intent": "COMPLEX", "reason": "several calls", "plan": {"goal": "answer", "steps": steps}}


def answer(summary: str = "Here you go.", verdict: str = "success", evidence: list[str] | None = None) -> dict:
    return {"summary": summary, "evidence": evidence or [], "verdict": verdict}


REFLECTION = {"went_well": "tools worked", "went_wrong": "nothing", "next_time": "do the same", "keywords": ["same"]}


def block(message_text: str, name: str) -> str:
    found = re.findall(rf"<{name}>\n(.*?)\n</{name}>", message_text, re.S)
    return found[-1] if found else ""


def prompt_of(model: ScriptedModel, contract: str, index: int = -1) -> str:
    calls = [c for c in model.calls if c.contract == contract]
    return "\n".join(str(m.content) for m in calls[index].messages)


class Runner:
    """Builds the assistant around a ScriptedModel and sends messages to threads."""

    def __init__(self, model: ScriptedModel, registry: ToolRegistry, **options: Any):
        from langgraph.checkpoint.memory import InMemorySaver

        from reins.runtime.persistence.checkpoint import strict_serializer

        self.model = model
        self.store = options.pop("store", InMemoryStore())
        self.graph = build_graph(
            models=ModelSet.uniform(model),
            checkpointer=InMemorySaver(serde=strict_serializer()),
            registry=registry,
            store=self.store,
            **options,
        )

    def ask(self, text: str, thread: str = "t1", **context: Any) -> dict[str, Any]:
        return self.graph.invoke(
            {"messages": [HumanMessage(content=text)]},
            {"configurable": {"thread_id": thread}},
            context=context or None,
        )


def chat_registry() -> ToolRegistry:
    registry = ToolRegistry()
    chat_tools.register(registry, http_allowlist=())
    return registry


class PageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str


class TransferArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    recipient: str
    amount: float


def bank_registry(page: str):
    """The chat tools plus a page reader that returns ``page`` and a trusted transfer tool (the user let
    it run unasked); returns the registry and the transfer tool's own record of what it executed."""
    executed: list[dict] = []

    def transfer(recipient: str, amount: float) -> str:
        executed.append({"recipient": recipient, "amount": amount})
        return f"sent {amount} to {recipient}"

    registry = chat_registry()
    registry.register(RegisteredTool("fetch_page", "Fetch a web page", PageArgs, frozenset({"chat"}),
                                     func=lambda url: page, read_only=True, sinks=("url",)))
    registry.register(RegisteredTool("transfer_money", "Send money to an account", TransferArgs, frozenset({"chat"}),
                                     func=transfer, approval="run", sinks=("recipient", "amount"),
                                     actions=("transfer", "send", "pay")))
    return registry, executed
