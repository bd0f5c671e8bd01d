"""``reins tasklist`` and ``reins resume``: output, exit codes, terminal review, pause and resume."""

from __future__ import annotations

import json

import pytest

from reins.cli import main
from reins.cli.tasklist import ask_review


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Each test gets its own SQLite checkpoint file and the offline model."""
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_MODEL", "REINS_CHECKPOINT", "REINS_CHECKPOINT_URL", "REINS_DOCS_ROOT", "REINS_CONTRACT_MODE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("plan", "code", "shown"),
    [
        ("v0.2.0-ready.md", 0, "Final decision: final"),
        ("v0.3.0-needs-review.md", 1, "Manual review items:"),
        ("draft-ideas.md", 1, "Which version does it target"),
        ("v0.4.0-overscoped.md", 3, "outside the tasklist agent's boundary"),
        ("../README.md", 2, "must stay inside docs://versions/"),
        ("missing.md", 2, "not found"),
    ],
)
def test_tasklist_exit_codes_and_output(capsys, plan, code, shown):
    assert main(["tasklist", f"docs://versions/{plan}"]) == code
    out, err = capsys.readouterr()
    assert shown in out
    assert "Read the version plan" in err  # live progress on stderr
    assert "Traceback" not in out + err


def test_tasklist_prints_the_artifact(capsys):
    assert main(["tasklist", "docs://versions/v0.2.2-needs-revision.md"]) == 0
    out = capsys.readouterr().out
    assert "Task list (revision 2, validated)" in out and "# v0.2.2 Tasklist" in out


def test_tasklist_json(capsys):
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["final_decision"] == "final" and payload["paused"] is False
    assert payload["thread_id"].startswith("tasklist-") and payload["artifact"]["metadata"]["target_version"] == "v0.2.0"


def test_a_request_without_a_uri_is_bad_input(capsys):
    assert main(["tasklist", "make", "me", "a", "plan"]) == 2
    assert "reference a version plan" in capsys.readouterr().err


def test_review_in_the_terminal(capsys, monkeypatch):
    answers = iter(["respond", "fewer steps", "nonsense", "approve", "approve"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["tasklist", "docs://versions/v0.2.2-needs-revision.md", "--review"]) == 0
    out, err = capsys.readouterr()
    assert "decision type nonsense is not allowed" in err
    assert "Final decision: final" in out


def test_end_of_input_leaves_the_run_paused_and_resume_finishes_it(capsys, monkeypatch):
    def closed(prompt=""):
        raise EOFError

    monkeypatch.setattr("builtins.input", closed)
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review", "--json"]) == 5
    paused = json.loads(capsys.readouterr().out)
    assert paused["paused"] and paused["pending_review"]["kind"] == "strategy_review" and paused["resumable"]
    thread = paused["thread_id"]

    assert main(["resume", thread, "--decision", "not json"]) == 2
    assert main(["resume", thread, "--decision", '{"type": "edit"}']) == 2
    assert "resume refused" in capsys.readouterr().err
    assert main(["resume", thread, "--decision", '{"type": "approve"}']) == 0
    assert "Final decision: final" in capsys.readouterr().out
    assert main(["resume", thread, "--decision", '{"type": "approve"}']) == 2
    assert "not waiting" in capsys.readouterr().err


def test_paused_run_prints_how_to_resume(capsys, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt="": (_ for _ in ()).throw(EOFError()))
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review"]) == 5
    out = capsys.readouterr().out
    assert "Paused for strategy_review" in out and "reins resume tasklist-" in out


def test_a_run_paused_in_memory_does_not_promise_a_resume(capsys, monkeypatch):
    """REINS_CHECKPOINT=memory dies with the process: say so instead of printing a resume line that fails."""
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    monkeypatch.setattr("builtins.input", lambda prompt="": (_ for _ in ()).throw(EOFError()))
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review"]) == 5
    out = capsys.readouterr().out
    assert "Paused for strategy_review" in out
    assert "reins resume" not in out and "REINS_CHECKPOINT=sqlite" in out

    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review", "--json"]) == 5
    paused = json.loads(capsys.readouterr().out)
    assert paused["paused"] and paused["resumable"] is False


@pytest.mark.parametrize(
    ("kind", "answers", "decision"),
    [
        ("strategy_review", ["approve"], {"type": "approve"}),
        ("strategy_review", ["reject", "too coarse"], {"type": "reject", "reason": "too coarse"}),
        ("strategy_review", ["respond", "split more"], {"type": "respond", "feedback": "split more"}),
        ("strategy_review", ["edit", '{"granularity":', '  "coarse"}', "."], {"type": "edit", "strategy": {"granularity": "coarse"}}),
        ("strategy_review", ["edit", "{not json", "."], {"type": "edit", "strategy": None}),
        ("strategy_review", ["edit", '{"granularity":'], None),
        ("revision_review", ["edit", "# New", "- [ ] x", "."], {"type": "edit", "markdown": "# New\n- [ ] x"}),
        ("revision_review", [], None),
    ],
)
def test_ask_review_builds_the_decision(kind, answers, decision, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    feed = iter(answers)

    def ask(prompt=""):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    payload = {"kind": kind, "question": "?", "allowed_decisions": ["approve", "edit", "reject"], "fix_now": [], "strategy": {}}
    assert ask_review(payload, ask) == decision


def test_a_paused_run_lists_each_decision_with_an_example(capsys, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt="": (_ for _ in ()).throw(EOFError()))
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review"]) == 5
    out = capsys.readouterr().out
    lines = {line.split(":", 1)[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert 'e.g. {"type": "approve"}' in lines["approve"]
    assert '"strategy": {"granularity":' in lines["edit"]
    assert '"reason":' in lines["reject"] and '"feedback":' in lines["respond"]


def test_resume_on_other_models_is_refused_in_one_line_unless_allowed(capsys, monkeypatch):
    from tests.wire.provider_stub import closed_port

    def closed(prompt=""):
        raise EOFError

    monkeypatch.setattr("builtins.input", closed)
    for name in ("REINS_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review", "--json"]) == 5
    started = json.loads(capsys.readouterr().out)
    assert started["models"] == {"tasklist": ["offline (rule-based stand-in)"]}
    thread = started["thread_id"]

    monkeypatch.setenv("REINS_MODEL", "some-model")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    assert main(["resume", thread, "--decision", '{"type": "approve"}']) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "resume refused: the run started on other models (" in err
    assert "--allow-model-change" in err and "tasklist" in err

    # Allowed: it goes on, on the configured model (here refused at its endpoint: a named cause).
    assert main(["resume", thread, "--decision", '{"type": "approve"}', "--allow-model-change"]) == 4
    assert "draft_v1 failed: connection refused" in capsys.readouterr().out


LONG_STRATEGY = {"granularity": "fine", "expected_step_range": [4, 9],
                 "grouping": [f"group {i}: the part of the plan about area number {i}" for i in range(12)],
                 "priority": ["risky work first", "then the interface changes"]}


def _review_payload(strategy):
    return {"kind": "strategy_review", "question": "Approve the strategy?", "allowed_decisions": ["approve", "edit"],
            "strategy": strategy, "decisions": {"edit": {"example": {"type": "edit", "strategy": strategy}}}}


def test_edit_without_an_editor_shows_the_whole_strategy_and_reads_several_lines(monkeypatch, capsys):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    edited = json.dumps({**LONG_STRATEGY, "granularity": "coarse"}, indent=2).splitlines()
    feed = iter(["edit", *edited, "."])
    decision = ask_review(_review_payload(LONG_STRATEGY), lambda prompt="": next(feed))
    assert decision == {"type": "edit", "strategy": {**LONG_STRATEGY, "granularity": "coarse"}}
    err = capsys.readouterr().err
    assert json.dumps(LONG_STRATEGY, indent=2) in err  # the whole example, formatted, never cut
    assert len(json.dumps(LONG_STRATEGY)) > 400


@pytest.fixture
def fake_editor(tmp_path, monkeypatch):
    """$EDITOR: a script that records the file it was given and makes the strategy coarse."""
    import sys

    seen = tmp_path / "seen.json"
    script = tmp_path / "fake-editor"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        "path = pathlib.Path(sys.argv[-1])\n"
        f"pathlib.Path({str(seen)!r}).write_text(path.read_text())\n"
        "strategy = json.loads(path.read_text())\n"
        "strategy['granularity'] = 'coarse'\n"
        "path.write_text(json.dumps(strategy, indent=2))\n"
    )
    script.chmod(0o755)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{script} --wait")
    return seen


def test_edit_opens_the_editor_on_the_strategy_as_formatted_json(fake_editor):
    decision = ask_review(_review_payload(LONG_STRATEGY), lambda prompt="": "edit")
    assert decision == {"type": "edit", "strategy": {**LONG_STRATEGY, "granularity": "coarse"}}
    assert fake_editor.read_text() == json.dumps(LONG_STRATEGY, indent=2) + "\n"


def test_a_reviewed_run_takes_the_strategy_edited_in_the_editor(fake_editor, capsys, monkeypatch):
    answers = iter(["edit", "approve", "approve"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--review", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["strategy"]["granularity"] == "coarse" and payload["final_decision"] == "final"
    assert json.loads(fake_editor.read_text())["granularity"] != "coarse"  # it was shown the proposed one


def test_a_failing_editor_leaves_the_strategy_unchanged(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "false")
    decision = ask_review(_review_payload(LONG_STRATEGY), lambda prompt="": "edit")
    assert decision == {"type": "edit", "strategy": LONG_STRATEGY}
    assert "the editor exited with status 1" in capsys.readouterr().err


def test_tasklist_reports_what_it_used_beside_its_worst_case(capsys):
    """The plan read and its model requests, beside the worst case of this configuration."""
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--json"]) == 0
    budget = json.loads(capsys.readouterr().out)["budget"]
    assert budget["worst_case"] == {"calls": 16, "output_tokens": 196608, "tool_calls": 2, "seconds": 2896.0}
    spent = budget["used"]
    assert spent["tool_calls"] == 1 and 0 < spent["calls"] <= budget["worst_case"]["calls"]
    assert budget["line"].startswith(f"calls {spent['calls']}/16 · output tokens {spent['output_tokens']}/196608")
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md"]) == 0
    assert f"budget (used/worst case): calls {spent['calls']}/16 · " in capsys.readouterr().out
