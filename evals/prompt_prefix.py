"""How much of each prompt a prefix cache could serve, measured on the offline stand-in.

A delivery run and a tasklist run record every call's messages (and the tools it offers, which a chat
template writes into the system turn). A call's prompt, laid out as a template lays it out, is
cacheable up to its longest common prefix with any earlier prompt of the same pass — what llama.cpp's
prompt cache, vLLM's prefix cache and hosted providers' prompt caching can serve. The share is in
characters (the stand-in has no tokenizer); the prompt tokens are the stand-in's own count.

``python -m reins.evals.prompt_prefix`` prints one line per pass; ``passes`` is what the test and the
docs read."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import PrivateAttr

from reins.graphs.delivery_chain import build_graph as build_delivery
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.fake_base import ModelCall
from reins.runtime.standins.offline import OfflineModel

DELIVERY_INPUTS = {"banner": {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"},
                   "upload": {"requirement_uri": "demo://scenarios/resumable-upload/requirement.md"}}
TASKLIST_INPUTS = {"ready": {"plan_uri": "docs://versions/v0.2.0-ready.md"},
                   "runtime-context": {"plan_uri": "docs://versions/v0.2.3-runtime-context.md"}}


class RecordingOffline(OfflineModel):
    """The stand-in, keeping every call it answers."""

    _seen: list[ModelCall] = PrivateAttr(default_factory=list)

    def respond(self, call: ModelCall) -> Any:
        self._seen.append(call)
        return super().respond(call)

    @property
    def seen(self) -> list[ModelCall]:
        return self._seen


def layout(call: ModelCall) -> str:
    """The prompt as a chat template lays it out: each message in turn, the offered tools in the system
    turn after its text."""
    parts = []
    for n, message in enumerate(call.messages):
        parts.append(f"<|{message.type}|>\n{message.content}")
        if n == 0 and call.tool_names:
            parts.append(f"<|tools|>\n{json.dumps(list(call.tool_names))}")
    return "\n".join(parts)


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    low, high = 0, n
    while low < high:  # binary search on prefix equality: C-speed slicing instead of a Python loop
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def cacheable(prompts: Sequence[str]) -> tuple[int, int]:
    """(characters an ideal prefix cache serves, all characters) over prompts sent in this order."""
    served = sum(max((common_prefix(p, q) for q in prompts[:i]), default=0) for i, p in enumerate(prompts))
    return served, sum(len(p) for p in prompts)


def record_delivery(payload: dict[str, Any]) -> list[ModelCall]:
    model = RecordingOffline()
    build_delivery(ModelSet.uniform(model)).invoke(payload)
    return model.seen


def record_tasklist(payload: dict[str, Any]) -> list[ModelCall]:
    model = RecordingOffline()
    build_tasklist(ModelSet.uniform(model)).invoke(payload)
    return model.seen


def prompt_tokens(calls: Sequence[ModelCall]) -> int:
    """The stand-in's own count (a quarter of the characters of the messages)."""
    return sum(sum(len(str(m.content)) for m in c.messages) // 4 for c in calls)


def passes() -> dict[str, dict[str, Any]]:
    """Per pass: calls, prompt tokens, the share an ideal prefix cache serves."""
    out = {}
    for name, calls in ([(f"delivery {k}", record_delivery(v)) for k, v in DELIVERY_INPUTS.items()]
                        + [(f"tasklist {k}", record_tasklist(v)) for k, v in TASKLIST_INPUTS.items()]):
        served, total = cacheable([layout(c) for c in calls])
        out[name] = {"calls": len(calls), "prompt_tokens": prompt_tokens(calls),
                     "cacheable_share": round(served / total, 3) if total else 0.0}
    return out


if __name__ == "__main__":
    for name, row in passes().items():
        print(f"{name}: {row['calls']} calls, {row['prompt_tokens']} prompt tokens, "
              f"{row['cacheable_share'] * 100:.0f} % servable from a prefix cache")
