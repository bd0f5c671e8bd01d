"""Resources: docs://, demo:// and project:// reads inside their sandbox, safe errors outside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reins.runtime.resources import (
    MAX_FILE_BYTES,
    PLAN_PROMPT_CHARS,
    PROMPT_CHARS,
    ResourceError,
    ResourceResolver,
    cut_for_prompt,
    parse_uri,
)


@pytest.fixture
def sandbox(tmp_path: Path) -> ResourceResolver:
    """A docs root and a bundle root in tmp_path, with a secret file next to (outside) them."""
    docs = tmp_path / "docs"
    bundle = tmp_path / "bundle"
    outside = tmp_path / "outside"
    for folder in (docs / "versions", bundle / "scenarios" / "banner", bundle / "governance", bundle / "rubrics", outside):
        folder.mkdir(parents=True)
    (docs / "versions" / "v1.md").write_text("# v1 plan\n", encoding="utf-8")
    (docs / "latest-context.md").write_text("latest context\n", encoding="utf-8")
    (docs / "big.md").write_text("x" * (MAX_FILE_BYTES + 1), encoding="utf-8")
    (docs / "exactly-max.md").write_text("y" * MAX_FILE_BYTES, encoding="utf-8")
    (docs / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    (bundle / "scenarios" / "banner" / "requirement.md").write_text("Show a banner.\n", encoding="utf-8")
    (bundle / "scenarios" / "banner" / "notes.md").write_text("not served\n", encoding="utf-8")
    (bundle / "governance" / "rules.md").write_text("rules\n", encoding="utf-8")
    (bundle / "private.md").write_text("not served\n", encoding="utf-8")
    (outside / "secret.md").write_text("TOP SECRET\n", encoding="utf-8")
    # Escapes planted inside the roots: a file symlink and a directory symlink pointing outside.
    os.symlink(outside / "secret.md", docs / "versions" / "leak.md")
    os.symlink(outside, docs / "linked-dir")
    os.symlink(outside, bundle / "rubrics" / "linked")
    # A symlink that stays inside its root is fine.
    os.symlink(docs / "versions" / "v1.md", docs / "alias.md")
    # A symlink to itself: never followed for ever, refused like a missing file.
    os.symlink(docs / "loop.md", docs / "loop.md")
    return ResourceResolver(docs_root=docs, bundle_root=bundle)


READS = [
    ("docs://versions/v1.md", "# v1 plan\n"),
    ("docs://versions/./v1.md", "# v1 plan\n"),
    ("docs://alias.md", "# v1 plan\n"),
    ("DOCS://versions/v1.md", "# v1 plan\n"),
    ("demo://scenarios/banner/requirement.md", "Show a banner.\n"),
    ("demo://governance/rules.md", "rules\n"),
    ("project://latest-context", "latest context\n"),
]


@pytest.mark.parametrize(("uri", "text"), READS, ids=[uri for uri, _ in READS])
def test_reads_inside_the_sandbox(sandbox, uri, text):
    resource = sandbox.read(uri)
    assert (resource.uri, resource.text) == (uri, text)


def test_a_file_of_exactly_the_limit_is_read(sandbox):
    assert len(sandbox.read("docs://exactly-max.md").text) == MAX_FILE_BYTES


REFUSED = [
    ("dot-dot", "docs://../outside/secret.md", "escape"),
    ("dot-dot-inside", "docs://versions/../../outside/secret.md", "escape"),
    ("backslash-dot-dot", "docs://versions\\..\\..\\outside\\secret.md", "escape"),
    ("symlinked-file", "docs://versions/leak.md", "outside its root"),
    ("symlinked-dir", "docs://linked-dir/secret.md", "outside its root"),
    ("demo-symlinked-dir", "demo://rubrics/linked/secret.md", "outside its root"),
    ("oversized", "docs://big.md", "too large"),
    ("not-utf8", "docs://binary.md", "not UTF-8"),
    ("unknown-scheme", "file://etc/passwd", "unsupported resource scheme"),
    ("http-scheme", "https://example.com/plan.md", "unsupported resource scheme"),
    ("missing-file", "docs://versions/nope.md", "not found"),
    ("directory", "docs://versions", "not found"),
    ("symlink-loop", "docs://loop.md", "not found"),
    ("absolute", "docs:///etc/passwd", "absolute paths"),
    ("windows-absolute", "docs://C:/Windows/win.ini", "absolute paths"),
    ("unc-absolute", "docs://\\\\server\\share\\x.md", "absolute paths"),
    ("empty", "docs://", "needs a path"),
    ("not-a-uri", "versions/v1.md", "not a resource URI"),
    ("demo-outside-areas", "demo://private.md", "serves only"),
    ("demo-docs-area", "demo://docs/versions/v1.md", "serves only"),
    ("demo-scenario-other-file", "demo://scenarios/banner/notes.md", "only requirement.md and context.md"),
    ("demo-scenario-too-deep", "demo://scenarios/banner/x/requirement.md", "only requirement.md and context.md"),
    ("project-other", "project://everything", "only project://latest-context"),
]


@pytest.mark.parametrize(("uri", "reason"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_refused_reads_raise_a_safe_resource_error(sandbox, tmp_path, uri, reason):
    with pytest.raises(ResourceError) as caught:
        sandbox.read(uri)

    message = str(caught.value)
    assert reason in message
    assert str(tmp_path) not in message
    assert "/etc/passwd" not in message  # no absolute path, not even the one the caller sent
    assert "TOP SECRET" not in message


def test_non_string_uri_is_refused():
    with pytest.raises(ResourceError, match="not a resource URI"):
        ResourceResolver().read(None)  # type: ignore[arg-type]


def test_parse_uri_splits_scheme_and_path():
    assert parse_uri(" Docs://versions/a.md ") == ("docs", "versions/a.md")


def test_pluggable_latest_context_provider(sandbox, tmp_path):
    resolver = ResourceResolver(docs_root=tmp_path / "docs", latest_context=lambda: "from the provider")
    assert resolver.read("project://latest-context").text == "from the provider"

    huge = ResourceResolver(latest_context=lambda: "z" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ResourceError, match="too large"):
        huge.read("project://latest-context")


def test_bundled_resources_are_readable():
    resolver = ResourceResolver()
    assert resolver.read("project://latest-context").text.strip()
    assert resolver.read("demo://scenarios/register-login/requirement.md").text.strip()
    assert resolver.read("demo://governance/delivery-boundaries.md").text.strip()


def test_default_docs_root_follows_reins_docs_root_at_read_time(sandbox, tmp_path, monkeypatch):
    resolver = ResourceResolver()  # built before the variable is set, like a graph's default
    monkeypatch.setenv("REINS_DOCS_ROOT", str(tmp_path / "docs"))
    assert resolver.read("docs://versions/v1.md").text == "# v1 plan\n"

    monkeypatch.setenv("REINS_DOCS_ROOT", str(tmp_path / "missing"))
    with pytest.raises(ResourceError) as caught:
        resolver.read("docs://versions/v1.md")
    assert "REINS_DOCS_ROOT" in str(caught.value) and str(tmp_path) not in str(caught.value)


@pytest.mark.parametrize("limit", [100, PROMPT_CHARS, PLAN_PROMPT_CHARS])
def test_cut_for_prompt_bounds_the_text_and_marks_the_cut(limit):
    long_text = "word " * limit
    cut = cut_for_prompt(long_text, limit)
    assert len(cut) <= limit
    assert cut.endswith("[cut: the rest is not shown]")
    assert long_text.startswith(cut.split("\n[cut")[0].rstrip("…"))


@pytest.mark.parametrize("text", ["", "short", "x" * PROMPT_CHARS])
def test_cut_for_prompt_keeps_text_within_the_limit(text):
    assert cut_for_prompt(text) == text


def test_resource_for_prompt_uses_the_default_cut(sandbox):
    resource = sandbox.read("docs://exactly-max.md")
    assert len(resource.for_prompt()) <= PROMPT_CHARS
    assert len(resource.for_prompt(PLAN_PROMPT_CHARS)) <= PLAN_PROMPT_CHARS
