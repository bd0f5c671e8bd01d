"""The assistant's memory rules: the short-term window and keyword retrieval of long-term notes.

Short-term: the last 8 turns (a turn starts at a user message and includes the replies to it);
any message longer than 2,000 characters is cut. Long-term: notes the store's semantic index finds
close to the request come first, then notes ranked by keyword overlap (ties go to the newer note).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from reins.policies.text.redaction import truncate
from reins.policies.verdict import ALLOWED, Verdict

MAX_TURNS = 8
MAX_MESSAGE_CHARS = 2000
MAX_RECOLLECTIONS = 3
MAX_KEYWORDS = 8
MIN_SIMILARITY = 0.35  # a semantic hit below this score is not a recollection

_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}|\d{2,}", re.I)
_CJK_RUN = re.compile(r"[\u3400-\u9fff]{2,}")
STOPWORDS = frozenset(
    """the and for with that this what when where which who whom whose why how are was were been
    being have has had does did doing can could should would will shall may might must into onto
    from than then there their them they you your yours our ours his her its not but any all
    some such very just also about over under again more most other only own same too out off
    please tell give show help want need like make made get got let lets use used using one two
    is it of to in on at by or an be do as so if no me my we us he she i a""".split()
)


def cut_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A message longer than ``limit`` characters is cut (the cut is marked)."""
    return truncate(text or "", limit)


def window_start(roles: Sequence[str], max_turns: int = MAX_TURNS) -> int:
    """Index of the first message to keep so that at most ``max_turns`` turns remain.

    ``roles`` are ``user`` / ``assistant`` (anything else counts with the turn it follows).
    """
    user_positions = [i for i, role in enumerate(roles) if role == "user"]
    if len(user_positions) <= max_turns:
        return 0
    return user_positions[-max_turns]


def trim_window(
    messages: Sequence[tuple[str, str]], max_turns: int = MAX_TURNS, max_chars: int = MAX_MESSAGE_CHARS
) -> list[tuple[str, str]]:
    """The last ``max_turns`` turns of ``(role, text)`` pairs, each text cut to ``max_chars``."""
    start = window_start([role for role, _ in messages], max_turns)
    return [(role, cut_message(text, max_chars)) for role, text in messages[start:]]


def keywords(text: str, limit: int | None = None) -> list[str]:
    """Distinct lower-case keywords in order of appearance (stopwords dropped; CJK as bigrams)."""
    found: list[str] = []
    for word in _WORD.findall(text or ""):
        lowered = word.lower()
        if lowered not in STOPWORDS and lowered not in found:
            found.append(lowered)
    for run in _CJK_RUN.findall(text or ""):
        for i in range(len(run) - 1):
            bigram = run[i : i + 2]
            if bigram not in found:
                found.append(bigram)
    return found[:limit] if limit else found


def rank_recollections(
    query: str, notes: Sequence[Mapping[str, Any]], limit: int = MAX_RECOLLECTIONS
) -> list[Mapping[str, Any]]:
    """Notes sharing at least one keyword with ``query``, most overlap first, newer first on ties.

    A note is ``{"text": ..., "keywords": [...]}``; its own text counts as keywords too. ``notes``
    are given oldest first.
    """
    wanted = set(keywords(query))
    if not wanted:
        return []
    scored = []
    for position, note in enumerate(notes):
        have = set(keywords(str(note.get("text", "")))) | {str(k).lower() for k in note.get("keywords", ())}
        overlap = len(wanted & have)
        if overlap:
            scored.append((overlap, position, note))
    scored.sort(key=lambda item: (-item[0], -item[1]))
    return [note for _, _, note in scored[:limit]]


def merge_recall(
    semantic: Sequence[tuple[str, float | None]],
    keyword_ranked: Sequence[str],
    limit: int = MAX_RECOLLECTIONS,
    min_similarity: float = MIN_SIMILARITY,
) -> list[str]:
    """Recollections: semantic hits scoring at least ``min_similarity`` (best first), then keyword
    matches; each note once; at most ``limit``. A hit without a score (a store with no index) is
    not a semantic match."""
    close = sorted(((score, text) for text, score in semantic if score is not None and score >= min_similarity),
                   key=lambda pair: -pair[0])
    merged: list[str] = []
    for text in [*(text for _, text in close), *keyword_ranked]:
        if text not in merged:
            merged.append(text)
    return merged[:limit]


# ------------------------------------------------------------------------------------ namespaces

MEMORY_ROOT = "assistant-memory"
MemoryScope = Literal["thread", "user"]  # a dropdown in Studio (the assistant's context)
SCOPES: tuple[str, ...] = get_args(MemoryScope)
# What a turn recalls unless told otherwise: the user's notes, so "remember that …" is recalled in
# the user's next session too (and skill drafts build up across sessions); "thread" keeps a
# conversation's notes to itself.
DEFAULT_SCOPE: MemoryScope = "user"


# A namespace label holds an id percent-encoded: "%", "." (the store's separator) and unprintable
# characters become %XX (UTF-8 bytes), everything else stays as written, whole. Distinct ids give
# distinct labels (``label_value`` reads an id back), and an id made only of other characters —
# "local", "alice", "chat-1a2b" — has the label it always had. A missing id is the bare "%", which
# no id encodes to. Notes stored under a label an earlier version merged (dots replaced by "_", cut
# at 120 characters) are left there: that label cannot say whose they were.
_ENCODED_IN_LABELS = re.compile(r"[%.\x00-\x1f\x7f-\x9f\ud800-\udfff]|[^\S ]")
NO_ID_LABEL = "%"


def _escaped(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode("utf-8", "surrogatepass"))


def store_label(value: str | None) -> str:
    """A store namespace label for an id: reversible, never empty, never merges two ids."""
    if not value:
        return NO_ID_LABEL
    return _ENCODED_IN_LABELS.sub(_escaped, value)


def label_value(label: str) -> str | None:
    """The id a label was made from (``store_label``'s inverse); None for the missing id."""
    from urllib.parse import unquote

    return None if label == NO_ID_LABEL else unquote(label, errors="surrogatepass")


def user_namespace(user_id: str | None, area: str = "shared") -> tuple[str, ...]:
    """The user's own area of the store: ``shared`` notes (what ``remember`` writes and
    ``memory_scope="user"`` recalls) or ``skills`` (approved skill drafts). Another user's areas
    are never in reach: the user id is part of every namespace."""
    return (MEMORY_ROOT, store_label(user_id or "local"), area)


def notes_namespace(user_id: str | None, scope: str | None, thread_id: str | None) -> tuple[str, ...]:
    """Where a turn's notes are recalled from and its reflection is written: the user's shared
    notes (scope ``user``, the default) or this thread's (scope ``thread``)."""
    if (scope or DEFAULT_SCOPE) == "user":
        return user_namespace(user_id)
    return (MEMORY_ROOT, store_label(user_id or "local"), "thread", store_label(thread_id))


# ------------------------------------------------------------------------------ lessons a model wrote

# A lesson is recalled into later turns' prompts, so a model-written one must not carry a value that
# could steer a later tool call (memory poisoning): a URL, an e-mail address, a filesystem path or a
# long number (an account, a phone). Lessons are about how to work, never about where to send things.
_STEERING = {
    "url": re.compile(r"\b(?:https?|ftp)://|\bwww\.[a-z0-9-]+\.[a-z]", re.I),
    "email": re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"),
    "path": re.compile(r"(?:^|\s)(?:/[\w.-]+){2,}|\b[a-z]:\\", re.I),
    "number": re.compile(r"(?:\d[ \-]?){8,}"),
}
_NAMED = {"url": "a URL", "email": "an e-mail address", "path": "a file path", "number": "a long number"}
LESSON_REFUSALS = {code: f"the lesson names {_NAMED[code]}, which could steer a later tool call; not stored"
                   for code in _STEERING}


def check_lesson(text: str) -> Verdict:
    """Whether a model-written lesson may go into long-term memory."""
    for code, pattern in _STEERING.items():
        if pattern.search(text):
            return Verdict.refuse(code, LESSON_REFUSALS)
    return ALLOWED
