"""Smaller defects of the chat's command line: a call declined through ``reins resume`` is the
user's decision (exit 0, not the failure code 4); Ctrl-C before any run began says so once."""

from __future__ import annotations

import json

import pytest

import reins.cli.runs as runs_command
from reins.cli import main
from reins.cli.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_PAUSED


def test_declining_a_call_through_resume_is_not_a_failure(sqlite_cli, capsys):
    assert main(["chat", "--once", "remember that I deploy on Fridays"]) == EXIT_OK
    assert main(["chat", "--new-thread", "f1", "--once", "forget the deploy day"]) == EXIT_PAUSED
    capsys.readouterr()
    decision = {"type": "reject", "reason": "keep it"}
    assert main(["resume", "f1", "--decision", json.dumps(decision)]) == EXIT_OK
    assert "[not run: you declined" in capsys.readouterr().out


def test_ctrl_c_before_a_run_says_interrupted_once(monkeypatch, capsys):
    def stopped(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(runs_command, "run", stopped)
    assert main(["runs"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "reins: interrupted\n"


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def _chat(monkeypatch, capsys, typed):
    import builtins

    lines = iter([*typed, "exit"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(lines))
    assert main(["chat", "--new-thread", "img"]) == EXIT_OK
    return capsys.readouterr()


def test_an_image_attached_with_slash_image_goes_with_the_next_message_to_the_vision_role(
        sqlite_cli, tmp_path, monkeypatch, capsys):
    from reins.policies.models.vision import NO_VISION_MODEL

    (tmp_path / "shot.png").write_bytes(PNG)
    out, err = _chat(monkeypatch, capsys, ["/image shot.png", "what is in this picture?", "what is 6*7?"])
    assert "reins: image 1 attached; it goes with your next message" in out + err
    assert NO_VISION_MODEL in out  # the image reached the assistant: no model reads it, refused in one line
    assert "42" in out  # the next message goes without it


@pytest.mark.parametrize(("make", "argument", "said"), [
    (None, "/image missing.png", "reins: missing.png: no such file"),
    (lambda p: p.write_text("not an image"), "/image notes.png", "reins: notes.png is not a PNG or JPEG image"),
    (lambda p: p.write_bytes(PNG + b"\x00" * (5 * 1024 * 1024)), "/image big.png", "reins: big.png is larger than 5 MiB"),
    (None, "/image", "reins: usage: /image PATH (a PNG or JPEG file)"),
])
def test_a_file_that_is_not_an_image_is_refused_in_one_line(sqlite_cli, tmp_path, monkeypatch, capsys, make, argument,
                                                            said):
    if make is not None:
        make(tmp_path / argument.split()[-1])
    out, err = _chat(monkeypatch, capsys, [argument])
    assert said in (out + err).splitlines()
    assert "attached" not in out + err


@pytest.mark.parametrize(("head", "mime"), [(PNG, "image/png"), (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
                                           (b"GIF89a", None), (b"", None), (b"\x89PNG", None)])
def test_image_type_by_its_first_bytes(head, mime):
    from reins.policies.models.vision import image_type

    assert image_type(head) == mime
