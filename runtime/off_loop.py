"""A node request for blocking local work (reading files): called directly under ``invoke``, in a
worker thread under ``ainvoke`` so the event loop never waits on the disk (LangGraph Server refuses
blocking calls on its loop)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OffLoop:
    """``result = yield OffLoop(load_catalog, root)`` inside a node generator (see ``runtime.calls``)."""

    func: Callable[..., Any]
    args: tuple[Any, ...] = ()

    def __init__(self, func: Callable[..., Any], *args: Any):
        object.__setattr__(self, "func", func)
        object.__setattr__(self, "args", args)

    def run(self) -> Any:
        return self.func(*self.args)

    async def arun(self) -> Any:
        return await asyncio.to_thread(self.func, *self.args)
