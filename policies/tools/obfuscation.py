"""Undoing the ways an injection hides a value from string matching (pure) — for the label only.

An injection that has read the data-flow policy spells the value it wants so that what the model
emits is not a substring of anything read: ``evil [dot] com``, ``secure (dash) systems``,
``%65vil.com``, Cyrillic look-alike letters, a secret written backwards. These forms let the
provenance search still *find* the untrusted text a value came from, so the prompt can show it.

They never decide whether a call runs: the decision needs a value positively traced to the user
(``reins.policies.tools.data_flow``), which no spelling can fake. A form found here only names a source.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from urllib.parse import unquote_plus

MIN_REVERSED = 4  # shorter tokens reversed match too much by chance
MAX_REVERSED = 64
MIN_PIECE_TOKEN = 8  # a token of a longer value (a URL's parameter) found on its own

# Spelled-out separators, bracketed ("[dot]", "(at)", "{dash}") or bare between two word characters.
_BRACKETED = re.compile(r"\s*[\[({<]\s*(dot|punkt|point|at|dash|hyphen|minus|underscore|slash|colon)\s*[\])}>]\s*",
                        re.I)
_BARE = re.compile(r"(?<=\w)\s+(dot|dash|hyphen)\s+(?=\w)", re.I)
_SEPARATORS = {"dot": ".", "punkt": ".", "point": ".", "at": "@", "dash": "-", "hyphen": "-", "minus": "-",
               "underscore": "_", "slash": "/", "colon": ":"}
_JOINERS = re.compile(r"[\s\-_\u00ad\u200b-\u200d\u2060\ufeff]+")  # spaces, hyphens, soft/zero-width joiners

# Letters that look like Latin ones (the common Cyrillic and Greek confusables; NFKC folds the rest:
# full-width forms, ligatures, mathematical letters).
_CONFUSABLES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
    "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ո": "n", "ս": "u", "ν": "v", "ο": "o", "α": "a", "ε": "e",
    "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "Ӏ": "l", "０": "0",
})


def spelled_out(text: str) -> str:
    """``evil [dot] com`` / ``evil dot com`` → ``evil.com``; ``a (at) b`` → ``a@b``."""
    text = _BRACKETED.sub(lambda m: _SEPARATORS[m.group(1).casefold()], text)
    return _BARE.sub(lambda m: _SEPARATORS[m.group(1).casefold()], text)


def decoded(text: str) -> str:
    """URL-decoded (``%2E``, ``+``), twice: an injection may encode the encoding."""
    for _ in range(2):
        if "%" not in text and "+" not in text:
            break
        text = unquote_plus(text)
    return text


@lru_cache(maxsize=4096)
def folded(text: str) -> str:
    """The one comparable form: decoded, separators spelled out restored, look-alike letters mapped
    to Latin, case folded, and spaces, hyphens and joiners dropped (``Riverside-View`` =
    ``riverside view``)."""
    text = unicodedata.normalize("NFKC", spelled_out(decoded(str(text)))).casefold().translate(_CONFUSABLES)
    return _JOINERS.sub("", text)


def reversed_tokens(value: str) -> list[str]:
    """The value's word-like tokens, each written backwards (a secret an injection asked to reverse
    inside a URL): only tokens of MIN_REVERSED to MAX_REVERSED characters."""
    tokens = re.findall(r"[^\W_]+", decoded(str(value)))
    return [token[::-1].casefold() for token in tokens if MIN_REVERSED <= len(token) <= MAX_REVERSED]


def hidden_in(value: str, text: str) -> tuple[str, str]:
    """How ``value`` hides in ``text`` and the token that shows it (("", "") when it does not):
    ``spelled`` (spelled-out separators, encoded, look-alike letters, hyphens or spaces changed),
    ``a piece`` (a long token of the value, e.g. a secret inside a URL longer than the stitching
    window) or ``reversed``. Values shorter than MIN_REVERSED are never searched."""
    key = folded(value)
    if len(key) < MIN_REVERSED:
        return "", ""
    flat = folded(text)
    if key in flat:
        return "spelled", value
    tokens = re.findall(r"[^\W_]+", decoded(str(value)))
    for token in tokens:
        if len(token) >= MIN_PIECE_TOKEN and folded(token) in flat:
            return "a piece", token
    for token in reversed_tokens(value):
        if token in flat:
            return "reversed", token
    return "", ""


__all__ = ["decoded", "folded", "hidden_in", "reversed_tokens", "spelled_out"]
