"""Text rules of the offline stand-in's delivery answers (not a language model): requirement
statements, concreteness, coverage, and governance / rubric signal phrases matched by stemmed words.

A phrase is found by normalised, stemmed tokens, not as a literal substring, so "storing every raw
prompt" meets the signal "store the prompts" (see ``signal_found``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import snowballstemmer

from reins.runtime.standins.offline.framework import OfflineRequest, one_line

MAX_STATEMENTS = 20
COVERAGE_RATIO = 0.6

STOPWORDS = frozenset(
    """a an the and or but if then else when while of to in on at by for with from into onto as is are was were be
    been being it its this that these those there their they them he she we you your our i me my his her us so
    such than too very can could will would shall should must may might do does did done doing have has had
    having not no nor only own same also just each every all any both few more most other some about above after
    again against before below between during over under up down out off once here why how what which who whom
    make makes made get gets got let lets need needs needed use uses used using able via per one two new""".split()
)
VAGUE = frozenset(
    """better faster nicer improve improved improves improvement improvements things thing stuff somehow good
    great nice easier easy feel feels feeling modern cool overall general various etc app application
    experience friendly lot lots really much quickly nicely well stuff everything something anything""".split()
)
MODAL = re.compile(r"\b(must|should|shall|needs? to|has to|have to|is required to|are required to)\b", re.I)
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>.+)$")
_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<text>.+?)\s*#*$")

# Built-in signal lists, used when the governance or rubric document is not in the prompt.
FALLBACK_RISK = {
    "blocker": [("An unresolved security-critical dependency", ["unresolved security", "not yet approved by security"])],
    "high": [("Credentials or authentication", ["password", "credential", "authentication"])],
    "medium": [("Data migration", ["migration", "migrate"])],
}
FALLBACK_BOUNDARY = {
    "blocked": [("Persisting raw delivery artifacts", ["raw delivery artifacts", "persist raw", "artifact store"])],
    "needs_review": [("Human review or checkpoint changes", ["human-in-the-loop", "checkpoint"])],
    "remit": [("Bypassing reviews or policy", ["bypass the review", "skip the review", "disable the policy"])],
}


# ------------------------------------------------------------------------------------ text rules


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS and len(w) > 1]


def is_concrete(sentence: str) -> bool:
    """At least three content words that are not vague ("better", "nicer", "somehow", …)."""
    return len([w for w in words(sentence) if w not in VAGUE]) >= 3


def covers(statement: str, candidate: str) -> bool:
    wanted = set(words(statement))
    if not wanted:
        return True
    return len(wanted & set(words(candidate))) / len(wanted) >= COVERAGE_RATIO


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


@dataclass
class Requirement:
    title: str = ""
    items: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    exclusions: list[str] = field(default_factory=list)

    def planner_statements(self) -> list[str]:
        """What the planner reads: the list items; the concrete sentences when there is no list."""
        chosen = self.items or [s for s in self.prose if is_concrete(s)]
        return _unique(chosen)[:MAX_STATEMENTS]

    def reviewer_statements(self) -> list[str]:
        """What the general reviewer checks: the planner's statements plus every concrete
        must/should sentence in the prose."""
        modal = [s for s in self.prose if MODAL.search(s) and is_concrete(s)]
        return _unique([*self.planner_statements(), *modal])[: MAX_STATEMENTS * 2]

    def label(self) -> str:
        if self.title:
            return self.title[:120]
        first = (self.planner_statements() or self.prose or ["the requirement"])[0]
        return first[:80]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i.strip() for i in items if i.strip()))


def parse_requirement(text: str) -> Requirement:
    req = Requirement()
    section = ""
    paragraphs: list[list[str]] = [[]]
    in_code = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line:
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        heading = _HEADING.match(line)
        if heading:
            if len(heading["level"]) == 1 and not req.title:
                req.title = heading["text"].strip()
            section = heading["text"].lower()
            continue
        item = _ITEM.match(line)
        if "assumption" in section:
            req.assumptions.append(item["text"] if item else line)
        elif any(k in section for k in ("out of scope", "non-goal", "non goal", "not in scope")):
            req.exclusions.append(item["text"] if item else line)
        elif item:
            req.items.append(item["text"].strip())
        else:
            paragraphs[-1].append(line)
    req.prose = [s for paragraph in paragraphs for s in _sentences(" ".join(paragraph))]
    return req


def parse_signals(document: str, heading_words: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Items ``- <label>. Signals: a, b, c`` under a heading that contains one of ``heading_words``."""
    found: list[tuple[str, list[str]]] = []
    active = False
    for raw in document.splitlines():
        line = raw.strip()
        heading = _HEADING.match(line)
        if heading:
            active = heading["level"] != "#" and any(w in heading["text"].lower() for w in heading_words)
            continue
        item = _ITEM.match(line)
        if active and item and "signals:" in item["text"].lower():
            label, _, signals = item["text"].partition("Signals:")
            if not signals:
                label, _, signals = item["text"].lower().partition("signals:")
            phrases = [s.strip().lower().rstrip(".") for s in signals.split(",") if s.strip()]
            found.append((label.strip().rstrip("."), phrases))
    return found


# Signal matching: words are lower-cased and stemmed (Snowball, English), so inflections and
# derivations meet ("stored", "storing" → store; "unpatched" → unpatch). Determiners are skipped
# on both sides; a signal's stems must appear in order within one sentence, a content stem at most
# one word away from the next, a short function word ("log in", "by security") right next to it.
SKIPPED = frozenset("a an the every each all any some its their our this that these those".split())
FUNCTION_WORDS = frozenset("in on at by of to for with from into out up off as is are be been not no yet".split())
_STEMMER = snowballstemmer.stemmer("english")
# A Snowball stemmer keeps the word it works on in its own fields: threads (the parallel reviewers
# under ``invoke``) take turns, or they corrupt each other's words (wrong stems, IndexError).
_STEMMER_LOCK = threading.Lock()
_TOKEN = re.compile(r"[a-z0-9]+")
_SEGMENT = re.compile(r"[.!?;\n]+")
_WORDS_ONLY = re.compile(r"^[\w\s'-]+$")


@lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    if word in FUNCTION_WORDS:
        return word
    with _STEMMER_LOCK:
        return _STEMMER.stemWord(word)


def stems(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens of ``text`` without determiners."""
    return [_stem(w) for w in _TOKEN.findall(text.lower()) if w not in SKIPPED]


def signal_found(signal: Sequence[str], tokens: Sequence[str]) -> bool:
    """Whether the stemmed ``signal`` occurs in ``tokens`` in order, each next stem at most two
    tokens after the previous one (one word between), or right after it when either is a function
    word."""
    if not signal:
        return False
    starts = [i for i, token in enumerate(tokens) if token == signal[0]]
    for start in starts:
        position, ok = start, True
        for previous, wanted in zip(signal, signal[1:]):
            reach = 1 if previous in FUNCTION_WORDS or wanted in FUNCTION_WORDS else 2
            following = [j for j in range(position + 1, min(position + reach, len(tokens) - 1) + 1)
                         if tokens[j] == wanted]
            if not following:
                ok = False
                break
            position = following[0]
        if ok:
            return True
    return False


def matched(text: str, items: Sequence[tuple[str, list[str]]]) -> list[tuple[str, str]]:
    """``(label, signal)`` for every item one of whose signals occurs in a sentence of ``text``. A
    signal that is not plain words (``artifact://``) is looked for literally."""
    lowered = " ".join(text.lower().split())
    segments = [stems(part) for part in _SEGMENT.split(text)]

    def found(signal: str) -> bool:
        if not _WORDS_ONLY.match(signal):
            return signal in lowered
        wanted = stems(signal)
        return any(signal_found(wanted, segment) for segment in segments)

    hits = []
    for label, phrases in items:
        phrase = next((p for p in phrases if p and found(p)), None)
        if phrase:
            hits.append((label, phrase))
    return hits


def _document(req: OfflineRequest, kind: str, title: str) -> str:
    """One titled context document of a kind, or '' when it is absent: from the call's structured
    inputs (``context``: the blocks the stage sees); a prompt that carries none (the evaluation's
    baselines) is read by its tagged ``[document] <title>`` sections instead."""
    if "context" in req.inputs:
        return next((b["markdown"] for b in req.inputs["context"] if b["kind"] == kind and b["title"] == title), "")
    block = req.block(kind)
    parts = re.split(r"^\[document\] ", block, flags=re.M)
    for part in parts:
        if part.startswith(title):
            return part[len(title):]
    return ""


def _signals(req: OfflineRequest, tag: str, title: str, heading_words: Sequence[str], fallback: list) -> list:
    parsed = parse_signals(_document(req, tag, title), heading_words)
    return parsed or list(fallback)  # a missing or signal-less document: the built-in list


def _area(text: str) -> str:
    lowered = text.lower()
    for area, keys in (
        ("web UI", ("banner", "page", "screen", "button", "form", "display", "show", "console", "progress")),
        ("authentication", ("login", "log in", "sign in", "password", "register", "session", "sso")),
        ("API", ("endpoint", "api", "request", "response", "upload")),
        ("data store", ("database", "table", "store", "persist", "history")),
        ("observability", ("metric", "log ", "logging", "alert")),
    ):
        if any(k in lowered for k in keys):
            return area
    return "application"


_short = one_line
