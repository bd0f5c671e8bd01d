"""Redaction: every secret, credential, absolute path and traceback goes; prose stays."""

from __future__ import annotations

import time

import pytest

from reins.policies.text.redaction import DEFAULT_LIMIT, REDACTED, redact, redact_mapping, truncate

# (case id, text, the secret part that must disappear)
SECRETS = [
    ("openai-key", "use sk-abcdefghijklmnop1234 for calls", "sk-abcdefghijklmnop1234"),
    ("openai-project-key", "key=sk-proj-AbCdEf123456_7890-xyz.", "AbCdEf123456_7890"),
    ("aws-access-key", "aws AKIAIOSFODNN7EXAMPLE id", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-session-key", "ASIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE"),
    ("github-token", "token ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ("slack-token", "xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
    ("api_key-assignment", "api_key=abc123secret", "abc123secret"),
    ("api-key-header", "x-api-key: abc123secret", "abc123secret"),
    ("api_key-json", '{"api_key": "abc123secret"}', "abc123secret"),
    ("API-KEY-quoted", "API-KEY: 'abc123secret'", "abc123secret"),
    ("prefixed-env-key", "OPENAI_API_KEY=abcd1234efgh", "abcd1234efgh"),
    ("prefixed-password", "DB_PASSWORD: hunter2", "hunter2"),
    ("password-in-query", "https://x.y/login?password=hunter2&user=bob", "hunter2"),
    ("token-assignment", "access_token=tok_9f8e7d6c", "tok_9f8e7d6c"),
    ("client-secret", "client_secret: 'cs-123456'", "cs-123456"),
    ("bearer", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def", "eyJhbGciOiJIUzI1NiJ9"),
    ("bearer-lowercase", "bearer abcdef123456", "abcdef123456"),
    ("basic-auth", "Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ("bare-jwt", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw", "SflKxwRJSMeKKF2QT4fw"),
    ("url-credentials", "postgresql://reins:hunter2@db.internal:5432/reins", "hunter2"),
    ("url-user", "https://alice:s3cret@example.com/x", "alice:s3cret"),
    ("url-password-only", "redis://:s3cret@cache:6379/0", "s3cret"),
    ("cookie", "Cookie: session=abc123; theme=dark", "session=abc123"),
    ("set-cookie", "Set-Cookie: id=a3fWa; Expires=Wed, 21 Oct", "a3fWa"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow"),
    ("posix-path", "failed to open /home/alice/project/secret.txt", "/home/alice"),
    ("posix-path-quoted", 'open("/etc/reins/config.toml")', "/etc/reins"),
    ("posix-dir", "cwd is /var/lib/reins/", "/var/lib"),
    ("home-path", "see ~/notes/plan.md", "~/notes"),
    ("windows-path", "see C:\\Users\\alice\\secrets.txt now", "alice"),
    ("windows-forward-slash", "C:/Users/alice/secrets.txt", "alice"),
    ("unc-path", "\\\\fileserver\\share\\plans\\v1.md", "fileserver"),
    ("file-uri", "file:///home/alice/x.md", "/home/alice"),
    (
        "traceback",
        'Traceback (most recent call last):\n  File "/app/runtime/x.py", line 3, in <module>\n    boom(key)\n'
        "ValueError: bad input",
        "boom(key)",
    ),
    ("traceback-frame", '  File "/srv/app/nodes/plan.py", line 42, in plan_worker', "plan_worker"),
]


@pytest.mark.parametrize(("text", "secret"), [case[1:] for case in SECRETS], ids=[case[0] for case in SECRETS])
def test_every_pattern_is_removed(text, secret):
    redacted = redact(text)
    assert secret not in redacted
    assert REDACTED in redacted or "[path]" in redacted or "[traceback removed]" in redacted


def test_traceback_keeps_the_final_error_line_only():
    text = 'Traceback (most recent call last):\n  File "/app/x.py", line 3, in f\n    g()\nValueError: bad\nnext'
    assert redact(text) == "[traceback removed]\nValueError: bad\nnext"


ORDINARY = [
    ("resource-uri", "read docs://versions/v0.2.0-ready.md first"),
    ("demo-uri", "demo://scenarios/register-login/requirement.md"),
    ("project-uri", "project://latest-context"),
    ("https-url", "see https://x.y/z and http://localhost:8123/threads"),
    ("url-with-port", "https://x.y:443/a@b"),
    ("versions", "upgrade from v0.2.1 to 1.2.3 (langgraph 1.2.x)"),
    ("fractions", "3/4 of the tasks, 1/2 done, ratio 10/20/30"),
    ("slash-words", "and/or, input/output, client/server"),
    ("relative-path", "edit src/runtime/x.py and ./docs/a.md"),
    ("time", "at 10:30/45 today"),
    ("token-prose", "the token budget is 500 tokens; max_tokens=100, input_tokens: 11"),
    ("password-prose", "Passwords must be hashed; add a password reset flow"),
    ("cookie-prose", "show the cookie consent banner"),
    ("basic-prose", "Basic understanding of auth is enough"),
    ("chinese", "版本 v0.2.1：完成登录与注册（3/4）"),
    ("markdown", "## Goal\n- [ ] T1: add `limit` banner\n| a | b |"),
    ("email", "contact ops@example.com"),
]


@pytest.mark.parametrize("text", [case[1] for case in ORDINARY], ids=[case[0] for case in ORDINARY])
def test_ordinary_text_is_kept(text):
    assert redact(text) == text


def test_length_is_bounded():
    assert len(redact("x" * 10_000)) == DEFAULT_LIMIT
    assert len(redact("x" * 500, 200)) == 200
    assert redact("x" * 500, 200).endswith("…")
    assert redact("short", 200) == "short"
    assert redact("anything", 0) == ""


def test_secrets_are_removed_before_the_cut():
    # A key straddling the limit must not survive as a partial prefix.
    text = "a" * 190 + " sk-abcdefghijklmnop1234"
    assert "sk-abcdefgh" not in redact(text, 200)


def test_non_strings_and_none():
    assert redact(None) == ""
    assert redact(ValueError("api_key=abc123secret")) == "api_key=[redacted]"
    assert redact(42) == "42"


def test_truncate():
    assert truncate("abcdef", 4) == "abc…"
    assert truncate("abc", 3) == "abc"
    assert truncate("abc", -1) == ""


def test_redact_mapping_walks_nested_values_and_keeps_keys():
    value = {"error": "token=abc123", "items": ["/home/alice/a.txt", 3, {"password": "pwd: hunter2"}], "n": None}
    assert redact_mapping(value) == {
        "error": "token=[redacted]",
        "items": ["[path]", 3, {"password": "pwd: [redacted]"}],
        "n": None,
    }


@pytest.mark.parametrize(
    "text",
    ["a-" * 20_000, "a_" * 20_000, "/a" * 20_000, "a:" * 20_000, "\\a" * 20_000, "a." * 20_000,
     "https://x.y/" + "?token=a" * 20_000],
    ids=["hyphens", "underscores", "slashes", "colons", "backslashes", "dots", "link-tokens"],
)
def test_redaction_stays_fast_on_long_adversarial_text(text):
    started = time.perf_counter()
    redact(text, 10**9)
    assert time.perf_counter() - started < 2.0  # quadratic patterns took minutes here


# A link's own one-time token (password reset, confirmation, unsubscribe) is what the link's
# recipient is meant to have: the user's data, kept so a requested link still works.
LINK_TOKENS = [
    ("reset-path", "https://techservices.com/auth/password-reset/token=?asfbuy3y2cdaqhvei"),
    ("reset-query", "Reset it at https://example.com/reset?token=Zx81kq0pL2&user=bob today."),
    ("confirm-fragment", "confirm: https://example.com/confirm#token=abc123def456"),
    ("second-parameter", "(https://example.com/u?list=7&token=abc123def456)"),
    ("numbered-list-item", "1. 3 2.https://example.com/reset/token=?asfbuy3y2cdaqhvei"),
]


@pytest.mark.parametrize("text", [c[1] for c in LINK_TOKENS], ids=[c[0] for c in LINK_TOKENS])
def test_a_links_own_token_is_kept(text):
    assert redact(text) == text


# Still credentials: a named one in a link, a bare token outside a link, a key shape or a configured
# value carried as a link's token, a "token" name joined to another word.
STILL_SECRET = [
    ("password-in-link", "https://x.y/login?password=hunter2&user=bob", "hunter2"),
    ("access-token-in-link", "https://api.x.y/v1?access_token=tok_9f8e7d6c", "tok_9f8e7d6c"),
    ("api-key-in-link", "https://api.x.y/v1?api_key=abc123secret", "abc123secret"),
    ("prefixed-token-in-link", "https://api.x.y/v1?auth-token=abc123secret", "abc123secret"),
    ("token-outside-a-link", "error: token=abc123secret rejected", "abc123secret"),
    ("token-in-a-schemeless-link", "x.y/a?token=abc123secret", "abc123secret"),
    ("token-colon-in-link", "https://x.y/a?token: abc123secret", "abc123secret"),
    ("github-key-as-link-token", "https://x.y/a?token=ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnop"),
    ("openai-key-as-link-token", "https://x.y/a?token=sk-abcdefghijklmnop1234", "abcdefghijklmnop1234"),
    ("slack-key-as-link-token", "https://x.y/a?token=xoxb-1234567890-abcdefghij", "1234567890-abcdefghij"),
    ("jwt-as-link-token", "https://x.y/a?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw",
     "SflKxwRJSMeKKF2QT4fw"),
    ("far-from-the-link-start", "https://x.y/" + "a" * 3000 + "?token=abc123secret", "abc123secret"),
]


@pytest.mark.parametrize(("text", "secret"), [c[1:] for c in STILL_SECRET], ids=[c[0] for c in STILL_SECRET])
def test_credentials_in_links_are_still_removed(text, secret):
    assert secret not in redact(text, 100_000)
    assert REDACTED in redact(text, 100_000)


def test_a_configured_value_is_removed_even_as_a_links_token():
    secrets = SecretValues(["plainvalue123456"])
    assert redact("https://x.y/reset?token=plainvalue123456", secrets=secrets) == "https://x.y/reset?token=[redacted]"


# Case variants the case-insensitive patterns match: capitals, the long s, the Kelvin sign and the
# two capital/dotless i's that case folding alone would not map to "i".
CASE_VARIANTS = [
    "AUTHORIZATION: BASIC dXNlcjpwYXNz",
    "Authorİzation: Basic dXNlcjpwYXNz",
    "authorıZation: basic dXNlcjpwYXNz",
    "paſſword=hunter2",
    "api_\u212aey=abc123secret",
    "COOKIE: session=abc",
    "cookıe: session=abc",
    "FİLE:///home/alice/x.md",
    "BEARER abcdef123456",
    "DB_PASSWD: hunter2",
]


def test_gated_redaction_equals_running_every_pattern():
    """Patterns are skipped when their needles are absent; that is only sound if nothing changes."""
    from reins.policies.text.redaction import _NEEDLES, PATTERN_NAMES, _redact_ungated

    assert set(_NEEDLES) == {"traceback", "traceback_frame", *PATTERN_NAMES}
    texts = [case[1] for case in SECRETS] + [case[1] for case in ORDINARY] + CASE_VARIANTS
    texts += [case[1] for case in LINK_TOKENS] + [case[1] for case in STILL_SECRET]
    texts += [f"prose before {text} and after" for text in texts]
    texts.append(" ".join(texts))
    for text in texts:
        assert redact(text, 100_000) == _redact_ungated(text), text
    for text in CASE_VARIANTS:
        assert redact(text) != text, text  # each variant really is a match that must not be skipped


# ------------------------------------------------------------------------------ secrets by value

from reins.policies.text.redaction import MIN_SECRET_CHARS, SecretValues, is_secret_name, secret_values  # noqa: E402

SECRET_NAMES = [
    ("OPENAI_API_KEY", True),
    ("REINS_API_KEY_REVIEWER", True),
    ("AWS_SECRET_ACCESS_KEY", True),
    ("GITHUB_TOKEN", True),
    ("DB_PASSWORD", True),
    ("CLIENT_SECRET", True),
    ("reins_api_key_chat", True),
    ("REINS_MODEL", False),
    ("OPENAI_BASE_URL", False),
    ("TOKENIZERS_PARALLELISM", False),
    ("KEYBOARD", False),
    ("PATH", False),
]


@pytest.mark.parametrize(("name", "secret"), SECRET_NAMES, ids=[case[0] for case in SECRET_NAMES])
def test_which_variables_are_secrets(name, secret):
    assert is_secret_name(name) is secret


def test_secret_values_keep_long_values_of_secret_names_longest_first():
    environ = {
        "OPENAI_API_KEY": "plainvalue123456",
        "REINS_API_KEY_REVIEWER": " reviewer-key-1 ",
        "SHORT_TOKEN": "1234567",  # shorter than MIN_SECRET_CHARS
        "MY_PASSWORD": "plainvalue123456-longer",
        "REINS_MODEL": "gpt-4o-mini-long-name",
    }
    assert MIN_SECRET_CHARS == 8
    assert secret_values(environ) == ("plainvalue123456-longer", "plainvalue123456", "reviewer-key-1")


VALUE_CASES = [
    ("echoed", "the key is plainvalue123456.", "the key is [redacted]."),
    ("twice", "plainvalue123456/plainvalue123456", "[redacted]/[redacted]"),
    ("longer-first", "x plainvalue123456-longer y", "x [redacted] y"),
    ("in-a-url", "GET http://h/v1/plainvalue123456?q=1", "GET http://h/v1/[redacted]?q=1"),
    ("case-sensitive", "PLAINVALUE123456", "PLAINVALUE123456"),
    ("absent", "nothing secret here", "nothing secret here"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in VALUE_CASES], ids=[c[0] for c in VALUE_CASES])
def test_secret_values_are_removed_wherever_they_occur(text, expected):
    secrets = SecretValues(["plainvalue123456", "plainvalue123456-longer", "short"])
    assert secrets.values == ("plainvalue123456-longer", "plainvalue123456")  # "short" is never a secret
    assert redact(text, secrets=secrets) == expected
    assert redact_mapping({"a": [text]}, secrets=secrets) == {"a": [expected]}


def test_a_value_is_removed_before_a_pattern_can_cut_it_and_before_the_limit():
    secrets = SecretValues(["abc/def/ghi-secret"])
    assert "ghi-secret" not in redact("see abc/def/ghi-secret", secrets=secrets)
    assert "abc/def" not in redact("x" * 95 + " abc/def/ghi-secret", 100, secrets=secrets)


def test_installed_values_apply_to_every_call_without_secrets():
    from reins.policies.text.redaction import installed_secret_values, use_secret_values

    before = installed_secret_values()
    try:
        use_secret_values(["plainvalue123456"])
        assert redact("echo plainvalue123456") == "echo [redacted]"
    finally:
        use_secret_values(before.values)
    assert redact("echo plainvalue123456") == "echo plainvalue123456"
