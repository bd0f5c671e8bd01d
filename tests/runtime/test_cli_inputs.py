"""Input from files: ``reins deliver --file PATH``, ``reins deliver -`` (standard input), a lone
argument naming a file (read, with a one-line note), and ``reins chat --file``."""

from __future__ import annotations

import io
import json

import pytest

from reins.cli import main
from reins.policies.models.model_notice import STAND_IN_NOTICE

BANNER = "Show a banner when a user hits the request limit.\n\n- The banner names the time the limit resets.\n"


@pytest.fixture
def offline(offline_cli):
    (offline_cli / "requirement.md").write_text(BANNER, encoding="utf-8")
    return offline_cli


def _requirement_seen(capsys) -> tuple[dict, str]:
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


@pytest.mark.parametrize("argv", [["--file", "requirement.md"], ["requirement.md"], ["./requirement.md"], ["-"],
                                  ["--file", "-"]])
def test_deliver_reads_a_requirement_from_a_file_or_stdin(offline, capsys, monkeypatch, argv):
    monkeypatch.setattr("sys.stdin", io.StringIO(BANNER))
    assert main(["deliver", *argv, "--json"]) == 0
    payload, err = _requirement_seen(capsys)
    assert payload["run_status"] == "pass"
    assert f"inline requirement: {len(BANNER.strip())} characters" in err  # the file's text, not its name
    notes = [line for line in err.splitlines() if line.startswith("reins: note")]
    positional_file = argv[0] != "--file" and argv != ["-"]
    assert notes == ([f"reins: note: reading the requirement from the file {argv[0]} (quote text to use it as written)"]
                     if positional_file else [])


def test_text_that_is_not_a_file_is_the_requirement(offline, capsys):
    assert main(["deliver", "missing-feature", "--json"]) in (0, 1)  # planned as the words given
    payload, err = _requirement_seen(capsys)
    assert "reins: note" not in err and "inline requirement: 15 characters" in err


@pytest.mark.parametrize("word", ["./nope.md", "nope.md", "../docs/nope.txt", "/tmp/reins-no-such/req.md", "~/nope.md"])
def test_a_path_to_a_missing_file_is_refused_not_planned(offline, capsys, word):
    assert main(["deliver", word]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"reins: error: {word.rsplit('/')[-1]}: no such file; give the requirement as text or name an existing file\n"
    assert "inline requirement" not in captured.err and captured.out == ""


@pytest.mark.parametrize(
    ("argv", "message", "stdin"),
    [
        (["--file", "missing.md"], "missing.md: no such file", ""),
        (["--file", "empty.md"], "empty.md is empty", ""),
        (["--file", "binary.md"], "binary.md is not UTF-8 text", ""),
        (["--file", "big.md"], "big.md is larger than 128 KiB", ""),
        (["-"], "standard input is empty", "   \n"),
        (["words", "--file", "requirement.md"], "give either the requirement or --file", ""),
        (["--scenario", "request-limit-banner", "--file", "requirement.md"], "give either a requirement or --scenario", ""),
    ],
)
def test_bad_files_are_one_line_errors(offline, capsys, monkeypatch, argv, message, stdin):
    (offline / "empty.md").write_text("")
    (offline / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    (offline / "big.md").write_text("x" * (128 * 1024 + 1))
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(["deliver", *argv, "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "bad_input" and error["message"] == message or error["message"].startswith(message)


def test_chat_reads_its_message_from_a_file(offline, capsys, monkeypatch):
    (offline / "question.txt").write_text("what is (17+25)*3?\n")
    assert main(["chat", "--file", "question.txt"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [STAND_IN_NOTICE, "(17+25)*3 = 126."]
    monkeypatch.setattr("sys.stdin", io.StringIO("what is 6*7?"))
    assert main(["chat", "--file", "-", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"][0]["output"] == "42"
    assert main(["chat", "--file", "question.txt", "--once", "hi", "--json"]) == 2
    assert "either --once or --file" in json.loads(capsys.readouterr().out)["error"]["message"]


@pytest.mark.parametrize("words", [
    "Show a banner when a user hits the request limit " * 8,  # one line of 400 bytes: longer than a file name may be
    "Banner-" + "x" * 300,  # one unbroken word of 307 bytes
    "~nosuchuser-reins/requirement",  # a home no user has
])
def test_a_long_one_line_requirement_is_text_not_a_file_probe(offline, capsys, words):
    assert len(words.encode()) > 255 or words.startswith("~")
    code = main(["deliver", words, "--json"])
    payload, err = _requirement_seen(capsys)
    assert (code, payload["run_status"]) in ((0, "pass"), (1, "clarification_required"))  # planned, not refused
    assert f"inline requirement: {len(words.strip())} characters" in err
    assert "reading the requirement from the file" not in err


def test_a_file_name_longer_than_the_system_allows_is_no_such_file(offline, capsys):
    assert main(["deliver", "--file", "r" * 300 + ".md"]) == 2
    assert capsys.readouterr().err.strip() == f"reins: error: {'r' * 300}.md: no such file"
