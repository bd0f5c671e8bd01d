"""Where a value the assistant is about to use came from (pure: text in, origins out).

Every text the assistant sees is a ``Source``: the user's own messages are the one trusted source;
every tool result (built-in, MCP, memory, skill, fetched page), a recalled note and an earlier reply
of the model are untrusted. A value of a proposed call is *user-given* when it occurs in what the
user wrote, and *tainted* when it does not but first occurs in an untrusted source. Nothing the
model says can change that: the model's words are never a trusted source.

Values are compared normalised: case, whitespace, URL forms (scheme, ``www.``, trailing slash),
``mailto:``/``tel:`` prefixes and phone punctuation do not hide a value; a long value stitched
together from pieces of several results is tainted too. A long text argument (a message body) is
also searched for the URLs, e-mail addresses, IBANs and phone numbers it carries.

A value is the user's only when it occurs in a trusted source in those plain forms. A value found
nowhere is then searched for in the untrusted texts in the forms an injection hides it in
(``reins.policies.tools.obfuscation``: spelled-out separators, URL-encoding, look-alike letters, hyphens,
reversal): that only names the source for the prompt, it never makes a value the user's.
Trusted sources are the user's messages, answers to ``ask_user``, the user's configuration (an
allow-list) and the results of tools the user marked as trusted *sources*.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from reins.policies.tools.obfuscation import hidden_in

SourceKind = Literal["user", "config", "tool", "memory", "reply"]
TRUSTED_KINDS = ("user", "config")  # the user's words (messages, answers, trusted sources) and configuration
LABELS = ("yours", "yours, given for another action", "tainted", "unknown origin")
EXCERPT_CHARS = 120
SHORT_VALUE = 6  # a normalised value shorter than this must match a whole word, not part of one
MIN_PIECE = 4  # the shortest piece of a value stitched together from several results
MAX_VALUE_CHARS = 2000
MAX_STITCHED = 64  # the longest value checked for pieces
MAX_PIECES = 4

_URL_PREFIX = re.compile(r"\b(?:https?://|ftp://|mailto:|tel:)|\bwww\.", re.I)
_SPACE = re.compile(r"\s+")
_TOKEN_SPLIT = re.compile(r"[\s,;:!?\"'()\[\]{}<>|`*]+")
_PHONE = re.compile(r"^\+?[\d\s().\-/]{7,}$")
_ENTITIES = (
    re.compile(r"\b(?:https?://|www\.)[^\s\"'<>)\]]+", re.I),  # URLs
    re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),  # e-mail addresses
    re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b"),  # IBANs
    re.compile(r"(?<![\w])\+?\d[\d\s().\-]{6,}\d"),  # phone numbers
    re.compile(r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|info|biz|co|app|xyz)\b(?:/[^\s\"'<>]*)?", re.I),
)


@dataclass(frozen=True)
class Source:
    """One text the assistant saw: ``label`` names it for a person (``tool result #2 (get_webpage)``)."""

    kind: SourceKind
    label: str
    text: str
    after_untrusted: bool = False  # a reply: written in a turn untrusted content had entered

    @property
    def trusted(self) -> bool:
        return self.kind in TRUSTED_KINDS


@dataclass(frozen=True)
class Origin:
    """Where one sink value came from: the argument, the value, the source it first appeared in and
    a short excerpt of that source around it; ``source`` is ``""`` for a value no source holds."""

    argument: str
    value: str
    trusted: bool
    source: str = ""
    excerpt: str = ""
    given_for: str = ""  # a value of the user's given for another action: that action's words
    hidden: str = ""  # how an untrusted source hides the value (spelled, a piece, reversed): a label only

    @property
    def tainted(self) -> bool:
        """Found in untrusted text as it is (not only in a hidden form)."""
        return bool(self.source) and not self.trusted and not self.hidden

    @property
    def label(self) -> str:
        """What a person should make of the value: yours, yours but given for another action,
        tainted (from untrusted text) or of unknown origin (in nothing you wrote)."""
        if self.trusted:
            return LABELS[1] if self.given_for else LABELS[0]
        return LABELS[2] if self.source and not self.trusted else LABELS[3]

    def as_payload(self) -> dict[str, Any]:
        payload = {"argument": self.argument, "value": self.value, "trusted": self.trusted, "label": self.label,
                   "source": self.where, "excerpt": self.excerpt}
        extra = {"given_for": self.given_for} if self.given_for else {}
        return {**payload, **extra, **({"hidden": self.hidden} if self.hidden else {})}

    @property
    def where(self) -> str:
        return self.source or ("your message" if self.trusted else "the model (not in anything read this turn)")


# ------------------------------------------------------------------------------------ normalising


def normalise(value: str) -> str:
    """The comparable form of a value: case-folded, URL/mail prefixes and whitespace dropped, a
    trailing slash dropped; a phone number is its digits."""
    text = str(value).strip()
    number = _number(text)
    if number:
        return number
    if _PHONE.match(text) and sum(c.isdigit() for c in text) >= 7:
        return "".join(c for c in text if c.isdigit())
    text = _URL_PREFIX.sub("", text.casefold())
    return _SPACE.sub("", text).rstrip("/")


def _number(text: str) -> str:
    """A plain decimal number in one form (``100.0`` and ``100`` alike), else ""."""
    if not re.fullmatch(r"-?\d{1,15}(?:\.\d+)?", text):
        return ""
    number = float(text)
    return str(int(number)) if number.is_integer() else repr(number)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


@dataclass(frozen=True)
class _Indexed:
    source: Source
    compact: str  # the whole text normalised
    words: frozenset[str]  # its words normalised
    digits: str
    cuts: frozenset[int]  # where in ``compact`` a value may start or end: not inside a run of letters and digits


@lru_cache(maxsize=2048)  # a turn's sources are indexed again for every value of every call
def _index(source: Source) -> _Indexed:
    words = frozenset(normalise(w) for w in _TOKEN_SPLIT.split(source.text) if w)
    words |= frozenset(w.rstrip(".") for w in words)
    compact, cuts = _compact_with_cuts(source.text) if source.trusted else (normalise_text(source.text), frozenset())
    return _Indexed(source, compact, words, _digits(source.text), cuts)


def _compact_with_cuts(text: str) -> tuple[str, frozenset[int]]:
    """``normalise_text`` and the positions in it where the original text had a space or a
    non-alphanumeric character next to the position: a value the user gave must sit between such
    cuts (``ample.net`` is not in ``example.net``, ``0532`` not in ``DE8905321``)."""
    flat = _URL_PREFIX.sub(" ", str(text).casefold())
    compact: list[str] = []
    cuts = {0}
    for char in flat:
        if char.isspace():
            cuts.add(len(compact))
            continue
        if not char.isalnum():
            cuts.update((len(compact), len(compact) + 1))
        compact.append(char)
    cuts.add(len(compact))
    return "".join(compact), frozenset(cuts)


def normalise_text(text: str) -> str:
    """A whole text in the form ``normalise`` gives a value (for substring search)."""
    return _SPACE.sub("", _URL_PREFIX.sub("", str(text).casefold()))


def _occurs(key: str, indexed: _Indexed, phone: bool) -> bool:
    if not key:
        return False
    if phone:
        return key in indexed.digits
    if len(key) < SHORT_VALUE:
        return key in indexed.words
    if not indexed.source.trusted:
        return key in indexed.compact
    at = indexed.compact.find(key)
    while at >= 0:
        if at in indexed.cuts and at + len(key) in indexed.cuts:
            return True
        at = indexed.compact.find(key, at + 1)
    return False


def _where(key: str, indexed: _Indexed, phone: bool) -> int:
    """Where a value sits in the source's own text (for the excerpt): the position in the text of
    the first character of its normalised match."""
    text = indexed.source.text
    keep = (lambda c: c.isdigit()) if phone else (lambda c: not c.isspace())
    dropped = set() if phone else {i for m in _URL_PREFIX.finditer(text) for i in range(m.start(), m.end())}
    kept = [i for i, c in enumerate(text) if keep(c) and i not in dropped]
    flat = "".join(text[i] for i in kept).casefold()
    position = flat.find(key)
    return kept[position] if 0 <= position < len(kept) and len(flat) == len(kept) else 0


def excerpt(text: str, at: int, limit: int = EXCERPT_CHARS) -> str:
    """About ``limit`` characters of ``text`` around position ``at``, on one line."""
    start = max(at - limit // 3, 0)
    piece = _SPACE.sub(" ", text[start:start + limit]).strip()
    return ("…" if start else "") + piece + ("…" if start + limit < len(text) else "")


def _stitched(key: str, sources: Sequence[_Indexed]) -> bool:
    """The value is covered, left to right, by a few pieces (at least MIN_PIECE long) of untrusted
    texts. Only for identifier-like values (one word, at most MAX_STITCHED long): prose is always
    made of pieces of other prose."""
    if not 2 * MIN_PIECE <= len(key) <= MAX_STITCHED:
        return False
    position, pieces = 0, 0
    while position < len(key):
        pieces += 1
        if pieces > MAX_PIECES:
            return False
        longest = 0
        for indexed in sources:
            size = MIN_PIECE
            while position + size <= len(key) and key[position:position + size] in indexed.compact:
                size += 1
            longest = max(longest, size - 1)
        if longest < MIN_PIECE:
            return False
        position += longest
    return True


# ------------------------------------------------------------------------------------ values


def leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every scalar inside an argument, as (path, text): ``recipients.0``, ``amount``."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}.{index}")
    elif value is not None and not isinstance(value, bool):
        yield path, str(value)[:MAX_VALUE_CHARS]


def candidates(text: str) -> list[str]:
    """The value itself and, for a longer text, the URLs, addresses, IBANs and numbers it carries."""
    found = [text]
    if len(text) > 24:
        for pattern in _ENTITIES:
            found += [m.group(0).rstrip(".,;:") for m in pattern.finditer(text)]
    return list(dict.fromkeys(found))


def carried(text: str) -> list[str]:
    """The URLs, e-mail addresses, IBANs and phone numbers a text carries (a body's links)."""
    found = [m.group(0).rstrip(".,;:") for pattern in _ENTITIES for m in pattern.finditer(str(text))]
    return list(dict.fromkeys(found))


def names_a_thing(value: str) -> bool:
    """The value names something — an id, address, account, amount, URL, path: one word, or an
    IBAN or phone number written with spaces — rather than being prose (a body, a subject, a title)."""
    text = str(value).strip()
    return bool(text) and (not any(c.isspace() for c in text) or any(p.fullmatch(text) for p in _ENTITIES[2:4]))


def origin_of(argument: str, value: str, sources: Sequence[Source]) -> Origin:
    """The value's provenance: user-given if the user wrote it (even when a tool returned it too),
    else the first untrusted source holding it (whole, or stitched from several), else none."""
    indexed = [_index(s) for s in sources]
    user = [i for i in indexed if i.source.trusted]
    untrusted = [i for i in indexed if not i.source.trusted]
    worst: Origin | None = None
    given = ""
    for piece in candidates(value):
        key = normalise(piece)
        phone = key.isdigit() and len(key) >= 7 and bool(_PHONE.match(piece.strip()))
        mine = next((i for i in user if key and _occurs(key, i, phone)), None)
        if mine is not None or not key:
            given = given or (mine.source.label if mine is not None and piece == value else "")
            continue
        for item in untrusted:
            if _occurs(key, item, phone):
                return Origin(argument, value, False, item.source.label,
                              excerpt(item.source.text, _where(key, item, phone)))
        if not phone and not any(c.isspace() for c in piece.strip()) and _stitched(key, untrusted):
            labels = ", ".join(i.source.label for i in untrusted if any(
                key[k:k + MIN_PIECE] in i.compact for k in range(0, len(key) - MIN_PIECE + 1, MIN_PIECE)))
            worst = worst or Origin(argument, value, False, f"pieces of {labels}", piece)
        elif piece == value and worst is None:
            worst = hidden_origin(argument, value, untrusted) or Origin(argument, value, False)
    return worst or Origin(argument, value, True, given)


def hidden_origin(argument: str, value: str, untrusted: Sequence[_Indexed]) -> Origin | None:
    """The untrusted text a value in no source's plain form hides in (spelled out, encoded,
    reversed, a piece of it): the label for the prompt, never a reason to run."""
    for item in untrusted:
        how, token = hidden_in(value, item.source.text)
        if how:
            at = item.source.text.casefold().find(token.casefold()[::-1] if how == "reversed" else token.casefold())
            return Origin(argument, value, False, f"{item.source.label}, {how}", excerpt(item.source.text, max(at, 0)),
                          hidden=how)
    return None


def sink_origins(args: Mapping[str, Any], sinks: Sequence[str] | None, sources: Sequence[Source]) -> tuple[Origin, ...]:
    """The origin of every value of the call's sink arguments (every argument when ``sinks`` is None)."""
    names = list(args) if sinks is None else [name for name in sinks if name in args]
    return tuple(origin_of(path, text, sources) for name in names for path, text in leaves(args[name], name))


def sources_of(
    request: str,
    user_turns: Sequence[str] = (),
    records: Sequence[Mapping[str, Any]] = (),
    recollections: Sequence[str] = (),
    replies: Sequence[str] = (),
    user_tools: Collection[str] = (),
    config: Sequence[str] = (),
    trusted_tools: Collection[str] = (),
    replies_after_untrusted: Sequence[str] = (),
) -> tuple[Source, ...]:
    """The provenance record of a turn: the user's words first, then every untrusted text in the
    order the assistant saw it. A record's arguments are not a source (they came from the others);
    the result of a ``user_tools`` call (a question the user answered) is the user's words, so is
    ``config`` (what the user configured: an allow-list of hosts) and the result of a
    ``trusted_tools`` call (a tool the user marked as a trusted source); ``replies_after_untrusted``
    are earlier replies written in a turn untrusted content had entered."""
    sources = [Source("user", "your message", text) for text in (request, *user_turns) if text]
    sources += [Source("config", "your configuration", " ".join(config))] if config else []
    sources += [Source("memory", "a recalled note", text) for text in recollections if text]
    sources += [Source("reply", "an earlier reply of the assistant", text) for text in replies if text]
    sources += [Source("reply", "an earlier reply of the assistant, written after untrusted content", text, True)
                for text in replies_after_untrusted if text]
    for record in records:
        output = record.get("output", "")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
        if text and record.get("tool") in user_tools and record.get("ok"):
            sources.insert(0, Source("user", "your answer", text))
        elif text and record.get("tool") in trusted_tools and record.get("ok"):
            sources.insert(0, Source("config", f"tool result #{record.get('n', '?')} ({record.get('tool')}), "
                                               "a source you trust", text))
        elif text:
            sources.append(Source("tool", f"tool result #{record.get('n', '?')} ({record.get('tool', '?')})", text))
    return tuple(sources)


def brings_untrusted(source: Source) -> bool:
    """Whether a source brings untrusted content into the turn (switching the rules for what follows
    untrusted content on): a tool's result; a recalled note (written in an earlier conversation,
    maybe from what a tool returned there); an earlier reply written after untrusted content (the
    model may have repeated what it read). A reply from a turn that read nothing untrusted does not:
    it holds only what the user and the model said."""
    if not source.text.strip():
        return False
    return source.kind in ("tool", "memory") or (source.kind == "reply" and source.after_untrusted)


def untrusted_seen(sources: Sequence[Source]) -> bool:
    """Untrusted content entered this turn: a tool returned something, a note was recalled, or the
    conversation holds a reply written after untrusted content."""
    return any(brings_untrusted(s) for s in sources)
