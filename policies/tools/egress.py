"""Where a call would send data, and whether the user named that place (pure).

A call that reaches outside — a URL, a host, a query, a header, a recipient — is an egress sink,
read-only or not: a GET carries data out in its URL as surely as a POST in its body. After
untrusted content entered the turn, such a call runs unasked only when its *destination* is
positively traced to the user:

- a URL: its scheme and host are in the user's words (a message, an answer, a trusted source) or on
  the user's allow-list (``REINS_HTTP_ALLOWLIST``); and a URL that carries parameters (a query or a
  fragment) must be the user's whole, or the parameters could be what leaves;
- anything else (an address, an account, a channel): the whole value is the user's.

A value untrusted text chose, one the model wrote and one in nothing read alike are not the user's:
the call pauses, saying that data may leave to a destination the user never named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from reins.policies.tools.http_access import check_url
from reins.policies.tools.provenance import Origin, Source, leaves, origin_of

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_HOSTLIKE = re.compile(r"^[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:[/?#].*)?$")


def url_parts(value: str) -> tuple[str, str, bool] | None:
    """(scheme://host, host, carries parameters) of a URL-like value — with or without a scheme —
    else None (an address, an account, a name)."""
    text = str(value).strip()
    if "@" in text.split("/", 1)[0] and not _SCHEME.match(text):
        return None  # an e-mail address
    if not _SCHEME.match(text):
        if not _HOSTLIKE.match(text):
            return None
        text = "http://" + text
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return None
    if not host:
        return None
    return f"{parts.scheme.lower()}://{host}", host, bool(parts.query or parts.fragment)


def url_allowed(value: str, allow_list: Sequence[str]) -> bool:
    """The URL's host is on the user's allow-list (``reins.policies.tools.http_access``: host, port, subdomains)."""
    text = str(value).strip()
    return bool(allow_list) and check_url(text if _SCHEME.match(text) else "http://" + text, allow_list).allowed


def egress_arguments(args: Mapping[str, Any], egress: Sequence[str] | None) -> list[str]:
    """The call's egress arguments present (every argument when ``egress`` is None: an undeclared tool)."""
    return list(args) if egress is None else [name for name in egress if name in args]


def destination_origin(argument: str, value: str, sources: Sequence[Source], allow_list: Sequence[str] = ()) -> Origin:
    """The origin of one egress value, judged by its destination: trusted only when the user named
    it (see the module); otherwise the value's own origin, as untrusted (tainted when found in
    untrusted text, else of unknown origin)."""
    own = origin_of(argument, value, sources)
    url = url_parts(value)
    if url is None:
        return own
    _, host, parameters = url
    if own.trusted:
        return own
    if url_allowed(value, allow_list) and not parameters:
        return Origin(argument, value, True, "your allow-list")
    named = next((s for s in sources if s.trusted and host_named(host, s.text)), None)
    if named is not None and not parameters:
        return Origin(argument, value, True, named.label)
    return own


def host_named(host: str, text: str) -> bool:
    """The host occurs in ``text`` as a whole host (``ample.net`` is not named by ``example.net``);
    a leading ``www.`` does not matter."""
    bare = re.sub(r"^www\.", "", host.casefold())
    return bool(re.search(rf"(?<![\w.-])(?:www\.)?{re.escape(bare)}(?![\w-]|\.[\w-])", text.casefold()))


def destination_origins(args: Mapping[str, Any], egress: Sequence[str] | None, sources: Sequence[Source],
                        allow_list: Sequence[str] = ()) -> tuple[Origin, ...]:
    """The origin of every egress value of a call."""
    return tuple(destination_origin(path, text, sources, allow_list)
                 for name in egress_arguments(args, egress) for path, text in leaves(args[name], name))


__all__ = ["destination_origin", "destination_origins", "egress_arguments", "host_named", "url_allowed", "url_parts"]
