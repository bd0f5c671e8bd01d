"""The two drivers of a generator that yields requests (objects with ``run()`` and ``arun()``): the
sync one makes each request with ``run``, the async one awaits ``arun``; a request's error is raised
at the ``yield``. Node logic (``reins.runtime.execution.calls``), the contract, text and tool-turn algorithms
(``reins.runtime.contracts``) and one model call's retry and fallback loop (``reins.runtime.llm.model_calls``) are
each written once this way and run under ``invoke`` and ``ainvoke``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

Steps = Generator[Any, Any, Any]


def drive(steps: Steps, run: Callable[[Any], Any] = lambda request: request.run()) -> Any:
    """Run ``steps``, making each request synchronously with ``run``; return what it returns."""
    try:
        request = next(steps)
        while True:
            try:
                result = run(request)
            except BaseException as error:  # raised at the generator's yield
                request = steps.throw(error)
            else:
                request = steps.send(result)
    except StopIteration as done:
        return done.value


async def adrive(steps: Steps) -> Any:
    """Run ``steps``, awaiting each request; return what it returns."""
    try:
        request = next(steps)
        while True:
            try:
                result = await request.arun()
            except BaseException as error:  # raised at the generator's yield (cancellation included)
                request = steps.throw(error)
            else:
                request = steps.send(result)
    except StopIteration as done:
        return done.value
