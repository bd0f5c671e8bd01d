"""policies/assistant/memory.py: the 8-turn window, the 2,000-character cut, keyword recollection."""

import pytest

from reins.policies.assistant.memory import MAX_MESSAGE_CHARS, cut_message, keywords, rank_recollections, trim_window, window_start


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
    from reins.policies.assistant.memory import merge_recall

    assert merge_recall(semantic, ranked) == expected


@pytest.mark.parametrize(
    ("user", "scope", "thread", "namespace"),
    [
        ("ann", "user", "t1", ("assistant-memory", "ann", "shared")),
        ("ann", "thread", "t1", ("assistant-memory", "ann", "thread", "t1")),
        (None, None, None, ("assistant-memory", "local", "shared")),  # the user's notes by default
        (None, "thread", None, ("assistant-memory", "local", "thread", "%")),  # no thread: a label no id has
        ("a.b", "user", None, ("assistant-memory", "a%2Eb", "shared")),  # no dots in a label: encoded, not replaced
    ],
)
def test_notes_namespace(user, scope, thread, namespace):
    from reins.policies.assistant.memory import notes_namespace

    assert notes_namespace(user, scope, thread) == namespace


# Ids that collided before their labels were encoded: a dot replaced by "_", cut at 120 characters,
# surrounding spaces stripped.
COLLIDING_BEFORE = [
    ("team.lead", "team_lead"),
    ("x" * 120 + "a", "x" * 120 + "b"),
    ("alice", " alice"),
    ("a\x00b", "a_b"),
    ("a%2Eb", "a.b"),  # an id that looks like an encoded one
    ("", "%"),
]


@pytest.mark.parametrize(
    ("value", "label"),
    [
        ("local", "local"),  # the ids people use keep the label they always had
        ("alice", "alice"),
        ("chat-1a2b", "chat-1a2b"),
        ("team_lead", "team_lead"),
        ("用户", "用户"),
        ("Ada Lovelace", "Ada Lovelace"),
        ("team.lead", "team%2Elead"),
        ("100%", "100%25"),
        ("a\nb", "a%0Ab"),
        ("a\x00b", "a%00b"),
        ("\udcff", "%ED%B3%BF"),  # a lone surrogate (a mis-decoded argument) is bytes too
        ("x" * 300, "x" * 300),  # never cut
        (None, "%"),
        ("", "%"),
    ],
)
def test_store_label_encodes_reversibly(value, label):
    from reins.policies.assistant.memory import label_value, store_label

    assert store_label(value) == label
    assert label_value(label) == (value or None)
    assert "." not in label and label  # what the store accepts as a namespace label


@pytest.mark.parametrize(("first", "second"), COLLIDING_BEFORE)
def test_distinct_ids_have_distinct_namespaces(first, second):
    from reins.policies.assistant.memory import notes_namespace, store_label, user_namespace

    if first and second:
        assert store_label(first) != store_label(second)
        assert user_namespace(first) != user_namespace(second)
    assert notes_namespace("u", "thread", first) != notes_namespace("u", "thread", second)


def test_every_label_reads_back_as_its_id():
    from reins.policies.assistant.memory import label_value, store_label

    ids = ["", "%", "%%", "%25", ".", "..", "a.b.c", "\t", " ", "é", "é.", "\x7f", "\u2028", "a/b:c", "~"]
    labels = [store_label(value) for value in ids]
    assert len(set(labels)) == len(set(ids) - {""}) + 1  # "" is the missing id
    assert [label_value(label) for label in labels] == [value or None for value in ids]
