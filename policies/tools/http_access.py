"""Rules of the chat ``http_get`` tool: which URLs may be fetched and what text comes back.

- Only http/https, no credentials in the URL, and the host must be on the allowlist: an entry
  ``example.com`` matches that host exactly (any port), ``example.com:8080`` also pins the port,
  ``*.example.com`` matches its subdomains (not the apex). An empty allowlist allows nothing.
- Redirects are followed only to URLs that pass the same check (the caller re-checks each hop).
- HTML is reduced to its visible text; the result is cut to 500 characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urlsplit

from reins.policies.text.redaction import truncate
from reins.policies.verdict import Verdict

MAX_TEXT_CHARS = 500
MAX_REDIRECTS = 3
ALLOWED_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class UrlVerdict(Verdict):
    host: str = ""  # the URL's host, normalised (for messages about the fetch)


def _normalise_host(host: str) -> str:
    return host.strip().lower().rstrip(".")


def _entry_matches(entry: str, host: str, port: int | None) -> bool:
    entry = entry.strip().lower()
    if not entry:
        return False
    entry_port: int | None = None
    if entry.count(":") == 1 and entry.rsplit(":", 1)[1].isdigit():
        entry, raw_port = entry.rsplit(":", 1)
        entry_port = int(raw_port)
    entry = entry.rstrip(".")
    if entry_port is not None and entry_port != port:
        return False
    if entry.startswith("*."):
        return host.endswith(entry[1:]) and host != entry[2:]
    return host == entry


def check_url(url: str, allowlist: Sequence[str]) -> UrlVerdict:
    """Whether ``url`` may be fetched under ``allowlist`` (reasons are safe to show)."""
    if not isinstance(url, str) or not url.strip():
        return UrlVerdict.refuse("empty_url", "the URL is empty")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return UrlVerdict.refuse("invalid_url", "the URL is not valid")
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        return UrlVerdict.refuse("scheme", "only http and https URLs can be fetched")
    if parts.username is not None or parts.password is not None:
        return UrlVerdict.refuse("credentials", "URLs with credentials are not allowed")
    host = _normalise_host(parts.hostname or "")
    if not host:
        return UrlVerdict.refuse("no_host", "the URL has no host")
    if not any(_entry_matches(entry, host, port) for entry in allowlist):
        reason = f"the host {host} is not on the allowlist (REINS_HTTP_ALLOWLIST)"
        return UrlVerdict.refuse("not_allowlisted", reason, host=host)
    return UrlVerdict(True, host=host)


class _TextExtractor(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    _BREAK = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BREAK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        elif tag in self._BREAK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Visible text of an HTML document: tags, scripts, styles and comments removed."""
    parser = _TextExtractor()
    parser.feed(html or "")
    parser.close()
    return normalise_whitespace("".join(parser.parts))


def normalise_whitespace(text: str) -> str:
    lines = (" ".join(line.split()) for line in (text or "").splitlines())
    return re.sub(r"\n{2,}", "\n", "\n".join(line for line in lines if line)).strip()


def looks_like_html(content_type: str, body: str) -> bool:
    if "html" in (content_type or "").lower():
        return True
    head = (body or "")[:500].lstrip().lower()
    return head.startswith(("<!doctype html", "<html")) or "<body" in head


def trim_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """At most ``limit`` characters; a cut is marked with an ellipsis inside the limit."""
    return truncate(text, limit)
