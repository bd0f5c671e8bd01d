"""Sandboxed resource reads behind URI schemes.

- ``docs://<path>``: the docs root (bundled ``resources/docs`` or ``REINS_DOCS_ROOT``)
- ``demo://scenarios/<id>/requirement.md|context.md``, ``demo://governance/*.md``, ``demo://rubrics/*.md``;
  governance and rubrics come from a team's own root when one is set (``REINS_GOVERNANCE_ROOT`` or
  the delivery chain's ``governance_root`` context): a document present there replaces the bundled
  one, a document it lacks stays bundled
- ``project://latest-context``: a pluggable provider (default: ``latest-context.md`` in the docs root)

Every read stays under its root: no absolute paths, no ``..``, no symlink escapes, at most 128 KiB.
Errors are ``ResourceError`` with a message that is safe to show (no filesystem paths). A secret
written in a document (a key, a password in a database URL) is replaced as it is read, so it is
never stored in a checkpoint or sent to a model.
"""

from __future__ import annotations

import copy
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from reins.policies.text.redaction import redact, redact_secrets, truncate
from reins.runtime.config.paths import BUNDLED_DOCS, RESOURCES

MAX_FILE_BYTES = 128 * 1024
PROMPT_CHARS = 12_000
PLAN_PROMPT_CHARS = 30_000
LATEST_CONTEXT_URI = "project://latest-context"
DEMO_AREAS = ("scenarios", "governance", "rubrics")
GOVERNANCE_AREAS = ("governance", "rubrics")  # the areas a custom governance root may replace
BUNDLED, CUSTOM = "bundled", "custom"
_URI = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.\-]*)://(?P<path>.*)$", re.I)
_SCENARIO_FILES = ("requirement.md", "context.md")


class ResourceError(Exception):
    """A resource could not be read; ``str(error)`` is safe to show to a user."""

    def __init__(self, message: str):
        super().__init__(redact(message, 300))


class ResourceNotFound(ResourceError):
    """The resource does not exist (as opposed to existing but breaking a sandbox rule)."""


@dataclass(frozen=True)
class Resource:
    uri: str
    text: str
    origin: str = BUNDLED  # "custom" when read from a custom governance root

    def for_prompt(self, limit: int = PROMPT_CHARS) -> str:
        return cut_for_prompt(self.text, limit)


def cut_for_prompt(text: str, limit: int = PROMPT_CHARS) -> str:
    """Text handed to a model is bounded; the cut is marked so nobody mistakes it for the whole."""
    if len(text) <= limit:
        return text
    return truncate(text, limit - 40) + "\n[cut: the rest is not shown]"


def parse_uri(uri: str) -> tuple[str, str]:
    match = _URI.match(uri.strip()) if isinstance(uri, str) else None
    if not match:
        raise ResourceError("not a resource URI; expected scheme://path such as docs://versions/<plan>.md")
    return match["scheme"].lower(), match["path"]


def _safe_relative(path: str) -> PurePosixPath:
    if not path.strip():
        raise ResourceError("a resource URI needs a path, such as docs://versions/<plan>.md")
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        raise ResourceError("absolute paths are not allowed in resource URIs")
    relative = PurePosixPath(path.replace("\\", "/"))
    if any(part in ("..", "") for part in relative.parts) or not relative.parts:
        raise ResourceError("path escapes are not allowed in resource URIs")
    return relative


safe_relative = _safe_relative  # the same rule for every sandboxed root (skills read through it too)


def read_under(root: Path, relative: PurePosixPath, uri: str) -> str:
    """Read ``root/relative`` if it really lies under ``root`` (symlinks resolved), is a file and is small.

    Plain ``os.path`` strings and one ``stat``: every run reads its context documents through here.
    """
    base = os.path.realpath(root)
    # realpath resolves every component, so a symlinked directory inside the root cannot point outside it.
    resolved = os.path.realpath(os.path.join(base, *relative.parts))
    if not _within(resolved, base):
        raise ResourceError(f"{uri} resolves outside its root")
    try:
        status = os.stat(resolved)
    except OSError:  # missing, a symlink loop, not a directory on the way
        status = None
    if status is None or not stat.S_ISREG(status.st_mode):
        raise ResourceNotFound(f"{uri} was not found")
    if status.st_size > MAX_FILE_BYTES:
        raise ResourceError(f"{uri} is too large ({status.st_size} bytes; the limit is {MAX_FILE_BYTES})")
    try:
        with open(resolved, encoding="utf-8") as file:
            return redact_secrets(file.read())
    except UnicodeDecodeError:
        raise ResourceError(f"{uri} is not UTF-8 text") from None


def _within(path: str, root: str) -> bool:
    """``path`` is ``root`` or lies below it (both resolved, absolute)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class ResourceResolver:
    """Resolves resource URIs to text under the sandbox rules above.

    Example: ``build_tasklist_agent(resolver=ResourceResolver(docs_root="my-docs"))``
    """

    def __init__(
        self,
        docs_root: Path | None = None,
        bundle_root: Path = RESOURCES,
        latest_context: Callable[[], str] | None = None,
        governance_root: Path | str | None = None,
    ):
        self._docs_root = Path(docs_root) if docs_root is not None else None
        self.bundle_root = Path(bundle_root)
        self._latest_context = latest_context
        self._governance_root = Path(governance_root) if governance_root is not None else None

    def with_governance_root(self, root: Path | str | None) -> ResourceResolver:
        """The same resolver with governance and rubrics from ``root`` (None: unchanged)."""
        if root is None:
            return self
        if not Path(root).is_dir():
            raise ResourceError("the governance root does not name an existing directory")
        clone = copy.copy(self)
        clone._governance_root = Path(root)
        return clone

    @property
    def governance_root(self) -> Path | None:
        """The given root, else ``REINS_GOVERNANCE_ROOT`` (read at each use), else None (bundled)."""
        if self._governance_root is not None:
            return self._governance_root
        configured = os.environ.get("REINS_GOVERNANCE_ROOT", "").strip()
        if not configured:
            return None
        if not Path(configured).is_dir():
            raise ResourceError("REINS_GOVERNANCE_ROOT does not name an existing directory")
        return Path(configured)

    @property
    def docs_root(self) -> Path:
        """The given root, else ``REINS_DOCS_ROOT`` (read at each use), else the bundled docs."""
        if self._docs_root is not None:
            return self._docs_root
        configured = os.environ.get("REINS_DOCS_ROOT", "").strip()
        if not configured:
            return BUNDLED_DOCS
        if not Path(configured).is_dir():
            raise ResourceError("REINS_DOCS_ROOT does not name an existing directory")
        return Path(configured)

    def read(self, uri: str) -> Resource:
        scheme, path = parse_uri(uri)
        if scheme == "docs":
            return Resource(uri, read_under(self.docs_root, _safe_relative(path), uri))
        if scheme == "demo":
            relative = _safe_relative(path)
            if relative.parts[0] not in DEMO_AREAS:
                raise ResourceError(f"demo:// serves only {', '.join(DEMO_AREAS)}")
            if relative.parts[0] == "scenarios" and (len(relative.parts) != 3 or relative.name not in _SCENARIO_FILES):
                raise ResourceError("demo://scenarios/<id>/ serves only requirement.md and context.md")
            custom = self.governance_root if relative.parts[0] in GOVERNANCE_AREAS else None
            # A document the custom root has (even a broken one: its error is shown, never skipped)
            # replaces the bundled one; the same sandbox rules apply to both roots.
            if custom is not None and os.path.lexists(custom.joinpath(*relative.parts)):
                return Resource(uri, read_under(custom, relative, uri), CUSTOM)
            return Resource(uri, read_under(self.bundle_root, relative, uri))
        if scheme == "project":
            if f"project://{path}" != LATEST_CONTEXT_URI:
                raise ResourceError("project:// serves only project://latest-context")
            if self._latest_context is not None:
                text = self._latest_context()
                if len(text.encode("utf-8")) > MAX_FILE_BYTES:
                    raise ResourceError(f"{uri} is too large")
                return Resource(uri, redact_secrets(text))
            return Resource(uri, read_under(self.docs_root, PurePosixPath("latest-context.md"), uri))
        raise ResourceError(f"unsupported resource scheme {scheme}://; use docs://, demo:// or project://")
