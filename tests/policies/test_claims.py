"""policies/tools/claims.py with policies/tools/approvals.py: a claim is live, stale or gone from what its reader
saw, and that decides which answers are taken and the line a refused one reads."""

from __future__ import annotations

import pytest

from reins.policies.tools.approvals import Claim, already_taken, decide_dispatch, refusal
from reins.policies.tools.claims import LEASE_S, Holder, liveness, offers_recovery, still_running, why_unfinished

HOLDER = Holder("worker-2", 4242, "worker-2|boot|pid:[1]", "991", "p1")
WHEN = "2026-12-07T10:00:00+00:00"


def _claim(state: str, kind: str = "run", holder: Holder | None = HOLDER) -> Claim:
    record = None if holder is None else {"host": holder.host, "pid": holder.pid, "machine": holder.machine,
                                          "started": holder.started, "process": holder.process}
    return Claim(1, kind, "tok", WHEN, "notes__add_note", {"text": "milk"}, record, 1.0, state=state)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("process", "age", "ended", "state"),
    [
        ("alive", 0.0, False, "live"),  # renewed just now, its process is there
        ("alive", LEASE_S, False, "live"),  # at the edge of the lease
        ("alive", LEASE_S + 0.1, False, "stale"),  # a live process whose dispatch stopped renewing
        ("unknown", 5.0, False, "live"),  # another machine, renewing: the lease decides
        ("unknown", 600.0, False, "stale"),  # another machine, silent
        ("unknown", -20.0, False, "live"),  # stamped ahead of the reader's clock: counted as fresh
        ("gone", 0.0, False, "gone"),  # killed a moment ago: no need to wait for the lease
        ("gone", None, False, "gone"),
        ("alive", 1.0, True, "gone"),  # its holder released it: the call raised or was cancelled
        ("unknown", None, False, "stale"),  # a claim written without a lease (an older Reins)
        ("alive", float("nan"), False, "stale"),
    ],
)
def test_liveness(process, age, ended, state):
    assert liveness(process, age, ended) == state


@pytest.mark.parametrize(
    ("state", "kind", "outcome"),
    [
        (None, "approve", "run"),
        (None, "run_again", "refuse"),  # nothing was dispatched
        ("live", "approve", "refuse"),  # the loser of a race
        ("live", "run_again", "refuse"),  # the first dispatch is alive: never a second one
        ("live", "mark_done", "refuse"),
        ("live", "skip", "refuse"),
        ("live", "reject", "refuse"),
        ("stale", "run_again", "recover"),
        ("stale", "mark_done", "recover"),
        ("stale", "skip", "recover"),
        ("stale", "approve", "refuse"),  # never an implicit repeat
        ("gone", "run_again", "recover"),
        ("gone", "mark_done", "recover"),
        ("gone", "skip", "recover"),
        ("gone", "edit", "refuse"),
    ],
)
def test_what_a_decision_does_on_a_claim(state, kind, outcome):
    claims = [] if state is None else [_claim(state)]
    assert decide_dispatch(kind, claims) == outcome
    assert offers_recovery(state) is (state in ("stale", "gone"))


@pytest.mark.parametrize(
    ("state", "kind", "says", "never"),
    [
        ("live", "run", "notes__add_note is still running in process 4242 on worker-2 (dispatched at " + WHEN + ")",
         "run_again"),
        ("live", "mark_done", "was already taken (mark_done at " + WHEN + ") and process 4242 on worker-2 is carrying",
         "run_again"),
        ("gone", "run", "may already have run (its dispatch in process 4242 on worker-2 ended before", "still running"),
        ("stale", "run", "(process 4242 on worker-2 stopped renewing its claim", "still running"),
    ],
)
def test_the_line_a_refused_decision_reads(state, kind, says, never):
    line = already_taken("notes__add_note", _claim(state, kind))
    assert says in line and never not in line and "\n" not in line
    if state != "live":
        assert '{"type": "run_again"}, {"type": "mark_done"} or {"type": "skip"}' in line
    assert refusal("run_again" if state == "live" else "approve", [_claim(state, kind)], "notes__add_note") == line


def test_a_claim_without_a_holder_reads_as_before():
    claim = _claim("stale", holder=None)
    assert claim.held_by() is None and why_unfinished("stale", None) == "its result was not recorded"
    assert "may already have run (its result was not recorded)" in already_taken("notes__add_note", claim)
    assert still_running("t", None, "") == ("t is still running in another process; wait for its result: it is not "
                                            "run again, marked done or skipped while it runs")


@pytest.mark.parametrize(
    ("value", "holder"),
    [
        ({"host": "h", "pid": 7, "machine": "m", "started": "1", "process": "p"}, Holder("h", 7, "m", "1", "p")),
        ({"host": "h", "pid": "x"}, None),  # unreadable: treated as no holder (stale once the lease lapses)
        ("h:7", None),
        (None, None),
    ],
)
def test_a_stored_holder_is_read_or_refused(value, holder):
    assert Holder.read(value) == holder
