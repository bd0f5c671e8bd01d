"""policies/tools/loop_guards.py: step budget, repeat limit, stall detection."""

import pytest

from reins.policies.tools.loop_guards import (
    MAX_STEPS,
    REPEATED_CALL,
    STALLED,
    STEP_LIMIT,
    call_signature,
    check_proposed_call,
    check_repeat,
    check_step_budget,
    detect_stall,
    jaccard,
)


@pytest.mark.parametrize(
    ("steps_taken", "max_steps", "allowed"),
    [(0, MAX_STEPS, True), (9, MAX_STEPS, True), (10, MAX_STEPS, False), (11, MAX_STEPS, False), (0, 1, True), (1, 1, False)],
)
def test_step_budget(steps_taken, max_steps, allowed):
    decision = check_step_budget(steps_taken, max_steps)
    assert decision.allowed is allowed
    assert decision.code == ("" if allowed else STEP_LIMIT)


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        (("calculator", {"expression": "1+1"}), ("calculator", {"expression": "1+1"}), True),
        (("calculator", {"expression": "1+1"}), ("calculator", {"expression": " 1+1 "}), True),
        (("http_get", {"url": "a", "x": 1}), ("http_get", {"x": 1, "url": "a"}), True),
        (("calculator", {"expression": "1+1"}), ("calculator", {"expression": "1+2"}), False),
        (("calculator", {"expression": "1+1"}), ("clock", {"expression": "1+1"}), False),
        (("clock", {}), ("clock", None), True),
    ],
)
def test_call_signature(left, right, same):
    assert (call_signature(*left) == call_signature(*right)) is same


SIG = call_signature("calculator", {"expression": "1+1"})
OTHER = call_signature("calculator", {"expression": "2+2"})


@pytest.mark.parametrize(
    ("previous", "allowed"),
    [([], True), ([SIG], True), ([SIG, OTHER], True), ([SIG, SIG], False), ([SIG, OTHER, SIG], False), ([OTHER, OTHER], True)],
)
def test_same_call_at_most_twice(previous, allowed):
    decision = check_repeat(previous, SIG)
    assert decision.allowed is allowed
    assert decision.code == ("" if allowed else REPEATED_CALL)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        ("a b c", "a b c", 1.0),
        ("a b c", "c b a", 1.0),
        ("A B", "a b", 1.0),
        ("a b c d", "a b c e", 0.6),
        ("a", "b", 0.0),
        ("", "", 1.0),
        ("", "a", 0.0),
        ("时间到了", "时间到", 0.75),
    ],
)
def test_jaccard(left, right, expected):
    assert jaccard(left, right) == pytest.approx(expected)


LONG = " ".join(f"w{i}" for i in range(20))
NEAR = LONG + " extra"  # 20/21 ≈ 0.95 similar
NINE = " ".join(f"w{i}" for i in range(9))
AT_THRESHOLD = NINE + " extra"  # 9/10 = 0.9 exactly: stalled
EIGHT = " ".join(f"w{i}" for i in range(8))
BELOW_THRESHOLD = EIGHT + " extra"  # 8/9 ≈ 0.89: still progress


@pytest.mark.parametrize(
    ("observations", "stalled"),
    [
        ([], False),
        (["4"], False),
        (["4", "4"], False),  # one identical retry is the repeat rule's business
        (["4", "4", "4"], True),
        ([LONG, NEAR, LONG], True),
        ([NINE, AT_THRESHOLD, NINE], True),
        ([EIGHT, BELOW_THRESHOLD, EIGHT], False),
        (["1", "2", "3"], False),
        (["4", "4", "5"], False),
        (["5", "4", "4", "4"], True),
        (["4", "4", "4", "5"], False),  # only the latest window counts
        (["error: timeout", "error: timeout", "error: timeout"], True),
    ],
)
def test_stall_detection(observations, stalled):
    decision = detect_stall(observations)
    assert decision.allowed is (not stalled)
    assert decision.code == (STALLED if stalled else "")
    if stalled:
        assert "not making progress" in decision.reason


# changed[i]: observation i came from a side-effecting call that succeeded (progress, whatever it said).
@pytest.mark.parametrize(
    ("observations", "changed", "stalled"),
    [
        # three messages sent to three people, each acknowledged "None": progress, not a stall
        (["None", "None", "None"], [True, True, True], False),
        # the same three results from calls that changed nothing (reads, failures, rejections): a stall
        (["None", "None", "None"], [False, False, False], True),
        (["None", "None", "None"], [], True),  # no flags: nothing changed
        # a failed side effect changes nothing: three identical errors still stop the loop
        (["error: timeout"] * 3, [False] * 3, True),
        # after a change, the window restarts: two equal reads are not yet a stall, three are
        (["None"] * 4, [False, True, False, False], False),
        (["None"] * 5, [False, True, False, False, False], True),
        # a change before an unchanged run of three does not hide it
        (["None"] * 4, [True, False, False, False], True),
        # a change inside the window breaks it
        (["None"] * 4, [False, False, True, False], False),
    ],
)
def test_a_call_that_changed_something_is_progress(observations, changed, stalled):
    decision = detect_stall(observations, changed=changed)
    assert decision.allowed is (not stalled)
    assert decision.code == (STALLED if stalled else "")


@pytest.mark.parametrize(
    ("steps_taken", "previous", "reason"),
    [(0, [], None), (10, [], STEP_LIMIT), (3, [SIG, SIG], REPEATED_CALL), (10, [SIG, SIG], STEP_LIMIT)],
)
def test_proposed_call_checks_budget_then_repeats(steps_taken, previous, reason):
    decision = check_proposed_call(steps_taken, previous, "calculator", {"expression": "1+1"})
    assert decision.code == (reason or "")
