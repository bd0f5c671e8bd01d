"""policies/tools/http_access.py: the allowlist and the text extraction of http_get."""

import pytest

from reins.policies.tools.http_access import check_url, html_to_text, looks_like_html, trim_text

ALLOW = ("example.com", "127.0.0.1", "*.docs.example.org", "api.local:8443")


@pytest.mark.parametrize(
    ("url", "allowed", "reason"),
    [
        ("https://example.com/page", True, ""),
        ("http://EXAMPLE.com./x", True, ""),
        ("http://127.0.0.1:8765/index.html", True, ""),
        ("https://a.docs.example.org/", True, ""),
        ("https://docs.example.org/", False, "not on the allowlist"),
        ("https://api.local:8443/v1", True, ""),
        ("https://api.local/v1", False, "not on the allowlist"),
        ("https://evil.com/", False, "not on the allowlist"),
        ("https://example.com.evil.com/", False, "not on the allowlist"),
        ("https://user:pw@example.com/", False, "credentials"),
        ("ftp://example.com/file", False, "only http and https"),
        ("file:///etc/passwd", False, "only http and https"),
        ("javascript:alert(1)", False, "only http and https"),
        ("http://localhost/", False, "not on the allowlist"),
        ("http:///nohost", False, "no host"),
        ("http://example.com:99999/", False, "not valid"),
        ("", False, "empty"),
    ],
)
def test_check_url(url, allowed, reason):
    decision = check_url(url, ALLOW)
    assert decision.allowed is allowed
    assert reason in decision.reason
    assert bool(decision.code) is not allowed  # a refusal names its rule


def test_empty_allowlist_allows_nothing():
    assert not check_url("https://example.com/", ()).allowed


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<p>Hello <b>world</b></p>", "Hello world"),
        ("<html><head><title>T</title><style>p{}</style></head><body><script>var x=1</script>Hi</body></html>", "Hi"),
        ("<ul><li>one</li><li>two</li></ul>", "one\ntwo"),
        ("a &amp; b &lt;c&gt;", "a & b <c>"),
        ("<!-- secret --><div>  spaced   out  </div>", "spaced out"),
    ],
)
def test_html_to_text(html, text):
    assert html_to_text(html) == text


@pytest.mark.parametrize(
    ("content_type", "body", "html"),
    [("text/html", "x", True), ("text/plain", "<!DOCTYPE html><p>", True), ("text/plain", "plain", False), ("", "<body>x", True)],
)
def test_looks_like_html(content_type, body, html):
    assert looks_like_html(content_type, body) is html


@pytest.mark.parametrize(("length", "out"), [(10, 10), (500, 500), (501, 500), (5000, 500)])
def test_trim_text(length, out):
    assert len(trim_text("z" * length)) == out
