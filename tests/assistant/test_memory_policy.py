"""policies/memory.py: the 8-turn window, the 2,000-character cut, keyword recollection."""

import pytest

from policies.memory import MAX_MESSAGE_CHARS, cut_message, keywords, rank_recollections, trim_window, window_start


def turns(n):
    out = []
    for i in range(1, n + 1):
        out += [("user", f"q{i}"), ("assistant", f"a{i}")]
    return out


@pytest.mark.parametrize(
    ("roles", "max_turns", "start"),
    [
        ([], 8, 0),
        (["user", "assistant"] * 8, 8, 0),
        (["user", "assistant"] * 9, 8, 2),
        (["user", "assistant"] * 12 + ["user"], 8, 10),
        (["assistant", "user", "assistant", "user"], 1, 3),
        (["user", "user", "user"], 2, 1),
    ],
)
def test_window_start(roles, max_turns, start):
    assert window_start(roles, max_turns) == start


def test_trim_window_keeps_the_last_eight_turns_and_cuts_long_messages():
    history = turns(10)
    history[-1] = ("assistant", "x" * 5000)
    kept = trim_window(history)
    assert [text for role, text in kept if role == "user"] == [f"q{i}" for i in range(3, 11)]
    assert len(kept[-1][1]) == MAX_MESSAGE_CHARS and kept[-1][1].endswith("…")


@pytest.mark.parametrize(("length", "cut"), [(0, False), (1999, False), (2000, False), (2001, True), (10_000, True)])
def test_cut_message(length, cut):
    text = "y" * length
    assert (cut_message(text) != text) is cut
    assert len(cut_message(text)) <= MAX_MESSAGE_CHARS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Convert the EUR amount, then fetch the rate", ["convert", "eur", "amount", "fetch", "rate"]),
        ("what is the time", ["time"]),
        ("what is it", []),
        ("Release 2026 plan plan", ["release", "2026", "plan"]),
        ("汇率转换", ["汇率", "率转", "转换"]),
    ],
)
def test_keywords(text, expected):
    assert keywords(text) == expected


NOTES = [
    {"text": "Lesson: fetch the exchange rate before converting", "keywords": ["currency"]},
    {"text": "Lesson: read the version plan first", "keywords": ["tasklist", "plan"]},
    {"text": "Lesson: convert currency with the latest rate", "keywords": ["currency", "convert"]},
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("convert 10 EUR with the current rate", [2, 0]),
        ("make a plan for the tasklist", [1]),
        ("hello there", []),
        ("", []),
        ("currency", [2, 0]),  # equal overlap: the newer note first
    ],
)
def test_rank_recollections(query, expected):
    ranked = rank_recollections(query, NOTES)
    assert [NOTES.index(note) for note in ranked] == expected


def test_rank_recollections_is_bounded():
    notes = [{"text": f"rate note {i}", "keywords": []} for i in range(10)]
    assert len(rank_recollections("rate", notes, limit=3)) == 3


@pytest.mark.parametrize(
    ("semantic", "ranked", "expected"),
    [
        ([], ["a", "b"], ["a", "b"]),
        ([("s", 0.9), ("t", 0.5)], ["a"], ["s", "t", "a"]),
        ([("t", 0.5), ("s", 0.9)], [], ["s", "t"]),  # best score first
        ([("low", 0.2), ("none", None)], ["a"], ["a"]),  # below the bar, or no index: not semantic
        ([("a", 0.8)], ["a", "b", "c", "d"], ["a", "b", "c"]),  # once each, at most three
    ],
)
def test_merge_recall(semantic, ranked, expected):
    from policies.memory import merge_recall

    assert merge_recall(semantic, ranked) == expected


@pytest.mark.parametrize(
    ("user", "scope", "thread", "namespace"),
    [
        ("ann", "user", "t1", ("assistant-memory", "ann", "shared")),
        ("ann", "thread", "t1", ("assistant-memory", "ann", "thread", "t1")),
        (None, None, None, ("assistant-memory", "local", "shared")),  # the user's notes by default
        (None, "thread", None, ("assistant-memory", "local", "thread", "default")),
        ("a.b", "user", None, ("assistant-memory", "a_b", "shared")),  # no dots in a label
    ],
)
def test_notes_namespace(user, scope, thread, namespace):
    from policies.memory import notes_namespace

    assert notes_namespace(user, scope, thread) == namespace
