"""Redaction of everything a user, a trace or a progress event can see.

Pure and deterministic: patterns and secret values in, placeholders out. Applied to every
user-visible string and every error message, so a secret planted in a requirement or an exception
never leaves the run. Secrets are found by shape (``sk-…``, ``Bearer …``) and by value: the values
of the secret environment variables (``secret_values`` says which), which the runtime reads and
installs with ``use_secret_values`` — and, through ``keep_secret_values_current``, checks again
before every use, so a key set at any time is redacted from then on (this module never reads the
environment).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

REDACTED = "[redacted]"
DEFAULT_LIMIT = 2000

# A traceback is dropped whole: it carries paths, source lines and often secrets.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):.*?(?=\n\S|\Z)", re.S)
_TRACEBACK_FRAME = re.compile(r'^\s*File "[^"]+", line \d+.*$', re.M)

# Every pattern anchors its start (a lookbehind or a literal) so redaction stays linear in the text
# length: it runs on whole artifacts and error messages before they are cut.
_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "private_key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S),
        REDACTED,
    ),
    # file:// URIs carry absolute paths; the path goes, the scheme stays so the sentence still reads.
    ("file_uri", re.compile(r"\bfile://[^\s\"'<>)]*", re.I), "file://[path]"),
    ("url_credentials", re.compile(r"(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]*://)[^/\s:@]*:[^/\s@]+@", re.I), r"\1" + REDACTED + "@"),
    ("bearer", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=\-]{4,}", re.I), "Bearer " + REDACTED),
    ("basic_auth", re.compile(r"\b(authorization\s*:\s*basic)\s+[A-Za-z0-9+/=._\-]+", re.I), r"\1 " + REDACTED),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), REDACTED),
    ("openai_key", re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    ("aws_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"), REDACTED),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}\b"), REDACTED),
    ("cookie", re.compile(r"\b(set-cookie|cookie)\s*:\s*[^\n]+", re.I), r"\1: " + REDACTED),
    (
        "secret_assignment",
        # The name may carry a prefix (OPENAI_API_KEY, DB_PASSWORD, x-api-key). Matches start only
        # where a name can start, so long hyphenated text stays linear (no quadratic rescans).
        re.compile(
            r"""(?ix)(?<![a-z0-9_\-])((?:[a-z0-9]+[_-])*(?:api[_-]?key|access[_-]?key|secret[_-]?key|client[_-]?secret
            |access[_-]?token|auth[_-]?token|token|secret|password|passwd|pwd))(["']?\s*[:=]\s*["']?)[^\s"',;&]+"""
        ),
        lambda match: match.group(0) if _is_link_token(match) else match.group(1) + match.group(2) + REDACTED,
    ),
    # A drive path with either slash (C:\\x or C:/x, but not a one-letter URI scheme such as a://).
    ("windows_path", re.compile(r"(?<![\w/])[A-Za-z]:[\\/](?![\\/])(?:[^\\/\s]+[\\/])*[^\\/\s]*"), "[path]"),
    ("unc_path", re.compile(r"(?<!\S)\\\\[\w.$\-]+\\[^\s]+"), "[path]"),
    # An absolute POSIX path: a slash not preceded by a word, a colon or another slash (so URIs such
    # as docs://versions/a.md and http://host/x stay), followed by at least one more segment.
    ("posix_path", re.compile(r"(?<![\w:/.\-~])(?:~)?/(?:[\w.\-]+/)+[\w.\-]*"), "[path]"),
    ("home_path", re.compile(r"(?<![\w/])~/[\w.\-/]+"), "[path]"),
)

PATTERN_NAMES = tuple(name for name, _, _ in _PATTERNS)

# The start of a web link, and where a link's own parameter may begin inside it.
_LINK_START = re.compile(r"https?://", re.I)
_LINK_PARAMETER_START = frozenset("/?&#;")
_LINK_LOOKBACK = 2048


def _is_link_token(match: re.Match[str]) -> bool:
    """A bare ``token=`` parameter of a web link: the one-time token of the link itself (password
    reset, e-mail confirmation, invitation, unsubscribe), which the link's recipient is meant to
    have — the user's data, not a credential Reins holds. Kept whole so a requested link still
    works. Named credentials in a link (``password=``, ``access_token=``, ``api_key=``), a bare
    ``token=`` outside a link, known key shapes and configured secret values are still removed
    (the shapes and values by their own rules, whatever parameter carries them)."""
    if match.group(1).lower() != "token" or match.group(2) != "=":
        return False
    start, text = match.start(), match.string
    if start == 0 or text[start - 1] not in _LINK_PARAMETER_START:
        return False
    window = max(0, start - _LINK_LOOKBACK)  # bounded: many matches in one long word stay linear
    word_start = max(text.rfind(c, window, start) for c in " \t\n\r\"'<>()[]") + 1
    if word_start == 0 and window > 0:
        return False
    return _LINK_START.search(text, word_start, start) is not None  # "2.https://…" in a list is a link too

# What every match of a pattern must contain (case-folded), so a text without any of these cannot
# match and its (relatively slow) regex scan is skipped. Case folding maps the characters that the
# case-insensitive patterns also fold (e.g. "ſ" → "s", the Kelvin sign → "k"; see ``_fold`` for the
# dotted and dotless i). A table test checks that gated and ungated redaction agree.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "traceback": ("traceback (most recent call last):",),
    "traceback_frame": ('file "',),
    "private_key": ("-----begin",),
    "file_uri": ("file://",),
    "url_credentials": ("://",),
    "bearer": ("bearer",),
    "basic_auth": ("authorization",),
    "jwt": ("eyj",),
    "openai_key": ("sk-",),
    "aws_key": ("akia", "asia"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "slack_token": ("xox",),
    "cookie": ("cookie",),
    "secret_assignment": ("key", "token", "secret", "passw", "pwd"),
    "windows_path": (":\\", ":/"),
    "unc_path": ("\\\\",),
    "posix_path": ("/",),
    "home_path": ("~/",),
}


# One scan for "is any needle present at all": most strings (labels, summaries, prose) have none
# and are only cut to length.
_ANY_NEEDLE = re.compile("|".join(re.escape(n) for needles in _NEEDLES.values() for n in needles))
_GATED = (
    ("traceback_frame", _TRACEBACK_FRAME, "[traceback removed]"),
    *_PATTERNS,
)


# ------------------------------------------------------------------------------ secrets by value

# A variable is a secret when it is one of these names, starts with one of these prefixes or ends
# with one of these suffixes; shorter values are too likely to occur in ordinary text.
SECRET_ENV_NAMES = frozenset({"OPENAI_API_KEY"})
SECRET_ENV_PREFIXES = ("REINS_API_KEY_",)
SECRET_ENV_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_SECRET_CHARS = 8


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in SECRET_ENV_NAMES or upper.startswith(SECRET_ENV_PREFIXES) or upper.endswith(SECRET_ENV_SUFFIXES)


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the secret variables in ``environ`` (at least ``MIN_SECRET_CHARS`` long once
    stripped), longest first so a value containing another is replaced whole."""
    values = {value.strip() for name, value in environ.items() if is_secret_name(name) and isinstance(value, str)}
    return tuple(sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=lambda v: (-len(v), v)))


class SecretValues:
    """Known secret values, replaced wherever they occur (an exact, case-sensitive match)."""

    __slots__ = ("values", "_pattern")

    def __init__(self, values: Iterable[str] = ()):
        self.values = tuple(sorted({v for v in values if len(v) >= MIN_SECRET_CHARS}, key=lambda v: (-len(v), v)))
        self._pattern = re.compile("|".join(map(re.escape, self.values))) if self.values else None

    def redact(self, text: str) -> str:
        # A substring test per value is far cheaper than a regex scan; most text holds none.
        if self._pattern is None or not any(value in text for value in self.values):
            return text
        return self._pattern.sub(REDACTED, text)


_installed = SecretValues()
_before_use: Callable[[], object] | None = None


def use_secret_values(values: Iterable[str]) -> SecretValues:
    """Make ``values`` the secrets every ``redact`` call without an explicit ``secrets`` removes."""
    global _installed
    _installed = SecretValues(values)
    return _installed


def keep_secret_values_current(check: Callable[[], object] | None) -> None:
    """Run ``check`` before the installed values are used (the runtime's: it installs new values
    when the environment changed); None stops it."""
    global _before_use
    _before_use = check


def installed_secret_values() -> SecretValues:
    if _before_use is not None:
        _before_use()
    return _installed


def _fold(value: str) -> str:
    """Case-folded text in which every needle a match contains can be found.

    ASCII text folds to its lower case. Otherwise ``casefold`` does the work, and afterwards the
    dotless i becomes "i" and the combining dot that folding leaves after a capital dotted I goes,
    so "İ" and "ı" (which the case-insensitive patterns treat as "i") read as "i". Dropping other
    combining dots only makes a needle appear where none was: an extra scan, never a missed one.
    """
    if value.isascii():
        return value.lower()
    folded = value.casefold()
    if "\u0131" in folded or "\u0307" in folded:
        folded = folded.replace("\u0131", "i").replace("\u0307", "")
    return folded


def redact(text: object, limit: int = DEFAULT_LIMIT, secrets: SecretValues | None = None) -> str:
    """Return ``text`` with secrets, credentials, absolute paths and tracebacks removed, cut to ``limit``.

    ``secrets``: the secret values to remove (default: the installed ones); they go first, so no
    pattern can cut a value in two and leave part of it.
    """
    value = (secrets or installed_secret_values()).redact("" if text is None else str(text))
    folded = _fold(value)
    if not _ANY_NEEDLE.search(folded):
        return truncate(value, limit)
    if "traceback (most recent call last):" in folded:
        value = _TRACEBACK.sub("[traceback removed]", value)
    for name, pattern, replacement in _GATED:
        # A substitution only removes or replaces with fixed text, so the needles of a later pattern
        # are checked against the original text: a superset of what the current text can contain.
        needles = _NEEDLES[name]
        if needles[0] in folded or any(needle in folded for needle in needles[1:]):
            value = pattern.sub(replacement, value)
    return truncate(value, limit)


# The shapes that are secrets (the other patterns remove paths and tracebacks: noise in user input).
SECRET_SHAPES = frozenset({
    "private_key", "url_credentials", "bearer", "basic_auth", "jwt", "openai_key", "aws_key",
    "github_token", "slack_token", "cookie", "secret_assignment",
})
_SECRET_PATTERNS = tuple(entry for entry in _PATTERNS if entry[0] in SECRET_SHAPES)


def redact_secrets(text: str, secrets: SecretValues | None = None) -> str:
    """``text`` with its secrets (by value and by shape) replaced and nothing else changed or cut:
    for what a user types, whose paths and length are the input rules' business."""
    value = (secrets or installed_secret_values()).redact(text)
    folded = _fold(value)
    for name, pattern, replacement in _SECRET_PATTERNS:
        if any(needle in folded for needle in _NEEDLES[name]):
            value = pattern.sub(replacement, value)
    return value


def was_redacted(text: object) -> bool:
    """Whether ``text`` carries a placeholder redaction left (for saying so, never for a decision
    a model could steer: the placeholder is only ever a hint)."""
    return isinstance(text, str) and REDACTED in text


def _redact_ungated(value: str) -> str:
    """Every substitution, unconditionally (the reference the gated path must equal)."""
    value = _TRACEBACK.sub("[traceback removed]", value)
    value = _TRACEBACK_FRAME.sub("[traceback removed]", value)
    for _, pattern, replacement in _PATTERNS:
        value = pattern.sub(replacement, value)
    return value


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters, marking the cut with an ellipsis."""
    if limit <= 0:
        return ""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def redact_mapping(value: object, limit: int = DEFAULT_LIMIT, secrets: SecretValues | None = None) -> object:
    """Redact every string inside nested dicts / lists / tuples (keys are kept)."""
    if isinstance(value, str):
        return redact(value, limit, secrets)
    if isinstance(value, dict):
        return {k: redact_mapping(v, limit, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_mapping(v, limit, secrets) for v in value]
    return value
