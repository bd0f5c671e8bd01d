"""The bundled scenarios on the rule-based OfflineModel, its rules, and ``reins deliver``."""

from __future__ import annotations

import json

import pytest

from reins.graphs.delivery_chain import build_graph
from reins.cli import main
from reins.cli.deliver import scenario_ids
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.offline.text_rules import (
    covers,
    is_concrete,
    matched,
    parse_requirement,
    parse_signals,
    signal_found,
    stems,
)

SCENARIOS = {
    "request-limit-banner": "pass",
    "register-login": "needs_review",  # a high risk needs a person, it never passes
    "vague-improvement": "clarification_required",
    "persist-raw-artifacts": "blocked",
    "sso-security-blocker": "blocked",
    "resumable-upload": "needs_review",
    "bypass-review": "blocked",
}


@pytest.fixture(scope="module")
def offline_graph():
    return build_graph(ModelSet.uniform(OfflineModel()))


def test_every_bundled_scenario_is_covered():
    assert set(scenario_ids()) == set(SCENARIOS)


@pytest.mark.parametrize(("scenario", "status"), sorted(SCENARIOS.items()))
def test_scenarios_reach_their_status_offline(offline_graph, scenario, status):
    out = offline_graph.invoke({"requirement_uri": f"demo://scenarios/{scenario}/requirement.md"})
    assert out["run_status"] == status
    assert out["policy_violation"] is None


def test_why_each_offline_status_happened(offline_graph):
    def run(scenario):
        return offline_graph.invoke({"requirement_uri": f"demo://scenarios/{scenario}/requirement.md"})

    boundary = run("persist-raw-artifacts")["review_bundle"]
    assert boundary["coverage"] == {"general": "completed", "risk": "completed", "boundary": "completed"}
    assert [b["source"] for b in boundary["blockers_and_high_risks"]][0] == "boundary"
    risk = run("sso-security-blocker")["review_bundle"]
    assert risk["blockers_and_high_risks"][0] == {"kind": "blocker", "source": "risk",
                                                  "detail": "risk review rated the delivery a blocker"}
    revised = run("resumable-upload")
    (first,) = [f for f in revised["review_bundle"]["findings"] if f["requirement"] == "required"]
    assert "recovery state" in first["description"]
    assert [o["target"] for o in revised["revision"]["outcomes"]] == ["plan", "tasks"]
    assert any("recovery state" in c for c in revised["artifacts"]["plan"]["markdown"].splitlines())
    login = run("register-login")
    assert any(i["kind"] == "high_risk" for i in login["review_bundle"]["blockers_and_high_risks"])
    assert login["review_bundle"]["status_reasons"] == ["the risk review rated the delivery high risk"]
    assert "Why the reviews did not pass: the risk review rated the delivery high risk." in login["report"]
    bypass = run("bypass-review")
    assert bypass["artifacts"]["plan"] is None and "Boundary evidence" in bypass["report"]


@pytest.mark.parametrize(
    ("requirement", "status"),
    [
        ("Show a banner when a user hits the request limit.", "pass"),
        ("Improve things.", "clarification_required"),
        ("Make it nicer somehow, better and faster.", "clarification_required"),
        ("- Export the invoice list as CSV for accountants.\n- Persist the raw delivery artifacts in the "
         "reporting database.", "blocked"),
        ("- Add an admin login.\n\nThe identity provider is an unresolved security component.", "blocked"),
        ("- Show the order history page.\n\nEach order row must link to the invoice download for that order.",
         "needs_review"),
    ],
)
def test_inline_requirements_offline(offline_graph, requirement, status):
    assert offline_graph.invoke({"requirement": requirement})["run_status"] == status


@pytest.mark.parametrize(
    ("requirement", "role", "verdict"),
    [
        # paraphrases of the governance document's signals, none of them a literal signal phrase
        ("- Store every raw prompt and full model response in the production database forever.",
         "boundary", "blocked"),
        ("- Integrate checkout with an unpatched third-party crypto library that has a known critical CVE "
         "and no fix.", "risk", "blocker"),
        ("- Keep persisting the raw review outputs after each run.", "boundary", "blocked"),
        ("- Ship the SSO plugin; it has not been approved by the security team yet.", "risk", "blocker"),
        ("- Users log in with their passwords on the new page.", "risk", "high"),
        ("- Resume paused runs from their last checkpoints.", "boundary", "needs_review"),
    ],
)
def test_paraphrased_signals_are_caught(offline_graph, requirement, role, verdict):
    out = offline_graph.invoke({"requirement": requirement})
    verdicts = {entry["role"]: entry["verdict"] for entry in out["review_bundle"]["completed"]}
    assert verdicts[role] == verdict
    assert out["run_status"] == ("blocked" if verdict in ("blocked", "blocker") else "needs_review")


HARD = [("Persisting raw delivery artifacts", ["raw delivery artifacts", "persist the raw", "store the prompts",
                                               "artifact://"])]


@pytest.mark.parametrize(
    ("text", "items", "hits"),
    [
        ("Store every raw prompt in the database.", HARD, [("Persisting raw delivery artifacts", "store the prompts")]),
        ("We persisted the raw plans.", HARD, [("Persisting raw delivery artifacts", "persist the raw")]),
        ("Save reports under artifact://runs/7.", HARD, [("Persisting raw delivery artifacts", "artifact://")]),
        # a URI signal stays literal: the word alone is not the signal
        ("The plan lists each artifact it needs.", HARD, []),
        # order matters, and a content word may be at most one word away from the next
        ("Prompts are stored.", HARD, []),
        ("Store the nightly backup of all user prompts.", HARD, []),
        # within one sentence only
        ("Store the backups. Prompts stay in memory.", HARD, []),
        # a function word must be adjacent: "log in" is not "log each request in"
        ("Log each request in the audit table.", [("Auth", ["log in"])], []),
        ("Users can log in from any page.", [("Auth", ["log in"])], [("Auth", "log in")]),
        ("Show the signed-in customer's orders.", [("Auth", ["sign in"])], [("Auth", "sign in")]),
        ("", HARD, []),
    ],
)
def test_signal_matching_is_stemmed_ordered_and_local(text, items, hits):
    assert matched(text, items) == hits


@pytest.mark.parametrize(
    ("signal", "text", "found"),
    [
        ("store the prompts", "storing all prompts", True),
        ("store the prompts", "storing raw prompts", True),
        ("store the prompts", "storing old raw prompts", False),
        ("not yet approved by security", "is not yet approved by the security team", True),
        ("not yet approved by security", "is yet not approved by security", False),
        ("migration", "migrating the users table", True),
        ("", "anything", False),
    ],
)
def test_signal_found(signal, text, found):
    assert signal_found(stems(signal), stems(text)) is found


def test_offline_runs_when_governance_documents_are_missing(tmp_path):
    from reins.runtime.resources import ResourceResolver

    (tmp_path / "scenarios").mkdir()
    graph = build_graph(ModelSet.uniform(OfflineModel()), resolver=ResourceResolver(bundle_root=tmp_path))
    out = graph.invoke({"requirement": "- Persist the raw delivery artifacts of each run."})
    assert out["run_status"] == "blocked"  # the built-in boundary signals still apply
    assert "a built-in summary was used" in out["report"]


# ------------------------------------------------------------------------------ offline rules


@pytest.mark.parametrize(
    ("text", "concrete"),
    [
        ("Show a banner when the limit is reached.", True),
        ("Make the app better.", False),
        ("It should feel faster and nicer somehow.", False),
        ("Lock the account after five failed attempts.", True),
    ],
)
def test_is_concrete(text, concrete):
    assert is_concrete(text) is concrete


@pytest.mark.parametrize(
    ("statement", "candidate", "covered"),
    [
        ("Show upload progress for each file.", "Show upload progress for each file.", True),
        ("Show upload progress for each file.", "Upload progress is shown per file.", True),
        ("Show upload progress for each file.", "Files upload quickly.", False),
        ("Show upload progress for each file.", "Each file shows its upload progress bar.", True),
        ("Resume from the last confirmed chunk.", "Split uploads into chunks.", False),
    ],
)
def test_covers(statement, candidate, covered):
    assert covers(statement, candidate) is covered


def test_parse_requirement_sections():
    req = parse_requirement(
        "# Title\n\nIntro sentence here. Users must see the retry time in the banner.\n\n- item one is here\n"
        "* item two is here\n1. item three is here\n\n```\n- not an item\n```\n\n## Assumptions\n\n- assumed\n\n"
        "## Out of scope\n\n- excluded"
    )
    assert req.title == "Title"
    assert req.items == ["item one is here", "item two is here", "item three is here"]
    assert req.assumptions == ["assumed"] and req.exclusions == ["excluded"]
    assert req.planner_statements() == req.items
    assert req.reviewer_statements() == [*req.items, "Users must see the retry time in the banner."]


def test_parse_signals_reads_only_the_named_sections():
    document = ("# Doc\n\n## Hard boundaries\n\n- Raw storage. Signals: persist raw, artifact store\n- no signals here\n\n"
                "## Needs review\n\n- Checkpoints. Signals: checkpoint\n")
    assert parse_signals(document, ["hard"]) == [("Raw storage", ["persist raw", "artifact store"])]
    assert parse_signals(document, ["needs review"]) == [("Checkpoints", ["checkpoint"])]


# ------------------------------------------------------------------------------ CLI


@pytest.fixture
def offline_env(monkeypatch, tmp_path):
    for name in ("REINS_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("argv", "code", "status"),
    [
        (["deliver", "--scenario", "request-limit-banner"], 0, "pass"),
        (["deliver", "--scenario", "resumable-upload"], 1, "needs_review"),
        (["deliver", "--scenario", "vague-improvement"], 1, "clarification_required"),
        (["deliver", "--scenario", "persist-raw-artifacts"], 3, "blocked"),
        (["deliver", "Show a banner when a user hits the request limit."], 0, "pass"),
        (["deliver", "docs://versions/v0.2.0-ready.md"], 2, "failed"),
        (["deliver", "file:///etc/passwd"], 2, "failed"),
    ],
)
def test_deliver_exit_codes_and_json(offline_env, capsys, argv, code, status):
    assert main([*argv, "--json"]) == code
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["run_status"] == status
    assert set(payload) == {"thread_id", "run_status", "report", "artifacts", "review_bundle", "post_review_decision",
                            "revision", "policy_violation", "failure", "metrics", "trace"}
    assert "Run finished" in captured.err  # live progress on stderr


def test_deliver_prints_the_report(offline_env, capsys):
    assert main(["deliver", "--scenario", "sso-security-blocker"]) == 3
    captured = capsys.readouterr()
    assert captured.out.startswith("# Delivery report") and "**Status: blocked**" in captured.out
    assert "status: blocked" in captured.err


@pytest.mark.parametrize(
    "argv",
    [
        ["deliver"],
        ["deliver", "text", "--scenario", "request-limit-banner"],
        ["deliver", "--scenario", "../etc"],
        ["deliver", "--scenario", "no-such-scenario"],
        ["deliver", "docs://versions/v0.2.0-ready.md"],
    ],
)
def test_deliver_bad_arguments(offline_env, capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "reins: error:" in captured.err
    assert "# Delivery report" not in captured.out, "bad input gets one line, not an empty report"


def test_deliver_list(offline_env, capsys):
    assert main(["deliver", "--list"]) == 0
    assert capsys.readouterr().out.split() == sorted(SCENARIOS)


def test_deliver_failed_run_exit_code(offline_env, capsys, monkeypatch):
    from reins.cli import deliver
    from reins.runtime.standins.scripted import ScriptedModel

    def scripted_graph(saver):
        return build_graph(ModelSet.uniform(ScriptedModel({"delivery.supervisor_pre": [RuntimeError("down")]})),
                           checkpointer=saver)

    monkeypatch.setattr(deliver, "_graph", scripted_graph)
    assert main(["deliver", "Show a banner when the limit is hit."]) == 4
    assert "Traceback" not in capsys.readouterr().err


def test_deliver_resume_finishes_an_interrupted_run(offline_env, capsys, monkeypatch, reins_home):
    from delivery_builders import script

    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.cli import deliver
    from reins.runtime.standins.scripted import ScriptedModel

    # A run dies mid-review (KeyboardInterrupt escapes every handler), leaving its checkpoint behind.
    dying = ScriptedModel(script(boundary_review=[KeyboardInterrupt()]))
    config = {"configurable": {"thread_id": "deliver-interrupted"}}
    with open_checkpointer("sqlite", path=reins_home / "checkpoints.db") as saver:
        with pytest.raises(KeyboardInterrupt):
            build_graph(ModelSet.uniform(dying), checkpointer=saver).invoke({"requirement": "Show a banner."}, config)
    assert dying.count("delivery.plan") == 1

    finishing = ScriptedModel(script(plan=None, tasks=None, general_review=None, risk_review=None, manager=None))
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    monkeypatch.setattr(deliver, "_graph", lambda saver: build_graph(ModelSet.uniform(finishing), checkpointer=saver))
    assert main(["deliver", "--resume", "deliver-interrupted", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["run_status"] == "pass" and payload["thread_id"] == "deliver-interrupted"
    assert finishing.contracts_called() == ["delivery.boundary_review", "delivery.supervisor_post"]
    # resuming a finished run shows it again without calling anything
    assert main(["deliver", "--resume", "deliver-interrupted", "--json"]) == 0
    assert finishing.contracts_called() == ["delivery.boundary_review", "delivery.supervisor_post"]
    capsys.readouterr()
    assert main(["deliver", "--resume", "no-such-thread"]) == 2


def test_deliver_resume_on_other_models_is_refused_unless_allowed(offline_env, capsys, monkeypatch):
    from delivery_builders import script

    from reins.cli import deliver
    from reins.cli.model_config import stamped
    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.runtime.standins.scripted import ScriptedModel
    from reins.runtime.config.settings import Settings

    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    dying = ScriptedModel(script(boundary_review=[KeyboardInterrupt()]))
    config = stamped({"configurable": {"thread_id": "deliver-switched"}}, Settings.from_env())
    with open_checkpointer("sqlite") as saver:  # the file in REINS_HOME, as the CLI uses
        with pytest.raises(KeyboardInterrupt):
            build_graph(ModelSet.uniform(dying), checkpointer=saver).invoke({"requirement": "Show a banner."}, config)

    finishing = ScriptedModel(script(plan=None, tasks=None, general_review=None, risk_review=None, manager=None))
    monkeypatch.setattr(deliver, "_graph", lambda saver: build_graph(ModelSet.uniform(finishing), checkpointer=saver))
    monkeypatch.setenv("REINS_MODEL_REVIEWER", "other-model")
    assert main(["deliver", "--resume", "deliver-switched"]) == 2
    assert "resume refused: the run started on other models (reviewer changed)" in capsys.readouterr().err
    assert finishing.contracts_called() == []
    assert main(["deliver", "--resume", "deliver-switched", "--allow-model-change", "--json"]) == 0
    assert finishing.contracts_called() == ["delivery.boundary_review", "delivery.supervisor_post"]
