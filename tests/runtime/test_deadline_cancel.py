"""Ctrl-C's cancellation reaches every model call that was waiting when it came, even when the
run's cancellable scope closes before the call's wait next looks (the main thread unwinds first)."""

from __future__ import annotations

import threading
import time

import pytest

from reins.runtime.execution.deadline import Cancelled, call_cancellable, call_with_deadline, cancel, cancellable


def test_a_cancel_reaches_a_waiting_call_after_the_scope_has_closed():
    hanging, started, outcome = threading.Event(), threading.Event(), {}

    def hung_call():
        started.set()
        hanging.wait()  # a provider that never answers (until the test ends)
        return "late answer"

    def node():
        try:
            outcome["value"] = call_cancellable(hung_call)
        except BaseException as error:  # noqa: BLE001 - the outcome under test
            outcome["error"] = error

    try:
        with cancellable():
            waiter = threading.Thread(target=node, daemon=True)
            waiter.start()
            assert started.wait(30)
            cancel()
        # The scope is closed at once, as when Ctrl-C's KeyboardInterrupt unwinds the main thread.
        waiter.join(30)
        assert not waiter.is_alive(), "the cancelled call kept waiting for its hung provider"
        assert isinstance(outcome.get("error"), Cancelled) and "value" not in outcome
    finally:
        hanging.set()


def _answer_after_some_polls() -> str:
    time.sleep(0.3)  # several of the wait's looks for a cancellation
    return "answer"


def test_a_cancel_of_a_closed_scope_does_not_reach_the_next_scope():
    with cancellable():
        cancel()
    with cancellable():
        assert call_with_deadline(_answer_after_some_polls, None) == "answer"


def test_outside_a_cancellable_scope_a_call_runs_in_the_caller_and_a_cancel_ends_no_later_call():
    cancel()
    caller = threading.current_thread()
    assert call_cancellable(lambda: threading.current_thread()) is caller
    with cancellable():
        assert call_cancellable(_answer_after_some_polls) == "answer"


@pytest.mark.parametrize("seconds", [None, 30.0])
def test_a_call_that_answers_returns_its_value_or_raises_its_error(seconds):
    with cancellable():
        assert call_with_deadline(lambda: 42, seconds) == 42
        with pytest.raises(ValueError, match="bad"):
            call_with_deadline(lambda: (_ for _ in ()).throw(ValueError("bad")), seconds)
