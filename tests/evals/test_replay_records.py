"""Replay over the evaluation's stored records (tests/evals/eval_records/records.json, written by
``reins eval --repeats 1 --perturb 0,0.3``) and the delegation fuzzer's stored sequences
(tests/delivery/fuzz_sequences.json, ``python -m reins.evals.delegation_fuzz 150``): the unchanged policy
flips nothing; each seeded rule change flips exactly the runs its rule predicts, each at the decision
it predicts, and no other run. The predictions read the recorded proposals, never the replay."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from reins.cli import main
from reins.evals.delegation_fuzz import load_sequences, sequence
from reins.evals.records import load_records, replay_records
from reins.nodes.delivery.replay import replay_values
from reins.policies.delivery.delegation import REVIEW_TOOLS, TASK_TOOL
from reins.policies.audit.replay import figures, parse_overrides
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "eval_records" / "records.json"
FUZZ = HERE.parent / "delivery" / "fuzz_sequences.json"

Expected = tuple[str, str, str] | None  # the first flip: (kind, recorded, replayed), or none


@pytest.fixture(scope="module")
def runs() -> dict[str, Mapping[str, Any]]:
    """Every stored run's recorded state, by run id: the evaluation's and the fuzzer's."""
    records = {r["id"]: r["decisions"] for r in load_records(RECORDS)}
    fuzzed = {s["id"]: s["values"] for s in load_sequences(json.loads(FUZZ.read_text(encoding="utf-8")))}
    return {**records, **fuzzed}


def test_the_stored_sets_are_small_and_cover_the_three_chain_baselines_and_the_fuzzer(runs):
    assert RECORDS.stat().st_size < 300_000 and FUZZ.stat().st_size < 300_000
    baselines = {run_id.split("/")[0] for run_id in runs if not run_id.startswith("fuzz-")}
    assert baselines == {"controlled_chain", "controlled_chain_fallback", "controlled_chain_escalation"}
    assert sum(run_id.startswith("fuzz-") for run_id in runs) == 150


def test_the_stored_fuzz_sequences_are_what_the_fuzzer_generates():
    stored = load_sequences(json.loads(FUZZ.read_text(encoding="utf-8")))
    assert [s["values"] for s in stored[:5]] == [json.loads(json.dumps(sequence(i))) for i in range(5)]


def test_the_unchanged_policy_flips_nothing_in_any_stored_run(runs):
    replays = [replay_values(values, run_id) for run_id, values in runs.items()]
    assert [r.thread_id for r in replays if r.first_flip] == []
    assert all(r.replayed_status == r.recorded_status for r in replays)
    counts = figures(replays)
    assert counts["decisions"] > 2 * counts["runs"]  # turns, re-asks, statuses and revisions were re-decided
    kept = [o for v in runs.values() for o in v.get("contract_outputs") or []]
    contracts = [d for r in replays for d in r.decisions if d.kind.startswith("contract:")]
    assert len(contracts) == len(kept) > 400  # every kept contract output was validated again
    assert {o["recorded"] for o in kept} == {"accepted", "repaired"}
    reasked = [v for v in runs.values() if any(r["reasked"] for r in v.get("manager_refusals") or [])]
    assert len(reasked) >= 10, "the stored runs include refused turns asked again"


# ---------------------------------------------------------------------------- the expected flips


def _label(verdict: Mapping[str, Any]) -> str:
    violation = verdict.get("violation")
    return verdict["next"] + (f" ({violation['code']})" if violation else "")


def review_before_tasks(values: Mapping[str, Any]) -> Expected:
    """A review-group turn refused as out of order because the tasks had not run is refused again,
    now because the reviewers' input (the task list) does not exist yet."""
    for turn in values.get("manager_proposals") or []:
        names = [call["name"] for call in turn["calls"]]
        code = (turn["verdict"]["violation"] or {}).get("code")
        if names and set(names) <= set(REVIEW_TOOLS) and code == "out_of_order" and TASK_TOOL not in turn["executed"]:
            return "delegation", "manager_refused (out_of_order)", "manager_refused (missing_input_artifact)"
    return None


def first_reask(values: Mapping[str, Any]) -> Expected:
    """With no re-ask, the first refused turn that was asked again fails closed."""
    if any(r["reasked"] for r in values.get("manager_refusals") or []):
        return "reask", "manager", "fail_closed"
    return None


def first_review_turn(values: Mapping[str, Any]) -> Expected:
    """One call fewer in the budget: the turn that sent the review group is refused."""
    if any(p["verdict"]["next"] == "reviewer" for p in values.get("manager_proposals") or []):
        return "delegation", "reviewer", "manager_refused (too_many_calls)"
    return None


def _outputs(values: Mapping[str, Any], *contracts: str) -> list[Mapping[str, Any]]:
    return [o for o in values.get("contract_outputs") or [] if o["contract"] in contracts]


def names_boundary(values: Mapping[str, Any]) -> Expected:
    """Without the boundary reviewer the supervisor's pre-decision schema has no boundary focus: a
    recorded pre-decision that gave one is rejected before anything else. Otherwise its tool is
    unregistered: the first turn naming it is refused so."""
    for pre in _outputs(values, "delivery.supervisor_pre"):
        if "boundary" in (pre["value"].get("review_focus") or {}):
            return "contract:delivery.supervisor_pre", pre["recorded"], "rejected (extra_forbidden at review_focus.boundary)"
    for turn in values.get("manager_proposals") or []:
        if any(call["name"] == "boundary-subagent" for call in turn["calls"]) and \
                (turn["verdict"]["violation"] or {}).get("code") != "unregistered_tool":
            return "delegation", _label(turn["verdict"]), "manager_refused (unregistered_tool)"
    return None


def low_risk_passes(values: Mapping[str, Any]) -> Expected:
    """A low risk made a concern: a passing run whose risk review said low needs what a risk concern asks."""
    bundle = values.get("review_bundle") or {}
    low = any(o["role"] == "risk" and o["outcome"] == "completed" and o["review"]["severity"] == "low"
              for o in values.get("review_outcomes") or [])
    if bundle.get("status") == "pass" and low:
        return "review_status", "pass", DEFAULT_REVIEWERS.of_role("risk").concern
    return None


def more_tasks_than(bound: int) -> Callable[[Mapping[str, Any]], Expected]:
    """A lower bound on the task list (declared once, on ``DeliveryTasks``, so it binds the revision
    too): the first kept task list longer than it is rejected, and its repair needs the model."""
    def first(values: Mapping[str, Any]) -> Expected:
        for output in _outputs(values, "delivery.tasks", "delivery.task_revision"):
            if len(output["value"]["tasks"]) > bound:
                return f"contract:{output['contract']}", output["recorded"], "rejected (too_long at tasks)"
        return None
    return first


def general_findings(values: Mapping[str, Any]) -> Expected:
    """No finding allowed in a general review: the first such review with findings is rejected."""
    for output in _outputs(values, "delivery.general_review"):
        if output["value"]["findings"]:
            return "contract:delivery.general_review", output["recorded"], "rejected (too_long at findings)"
    return None


MUTATIONS: dict[str, tuple[list[str], Callable[[Mapping[str, Any]], Expected], str | None]] = {
    # name: (--set changes, the first flip each run should show, the status a flipped run ends in)
    "allow the review group before tasks": (["require_tasks_before_review=false"], review_before_tasks, None),
    "lower the re-ask budget": (["max_manager_reasks=0"], first_reask, "failed"),
    "lower the call budget": (["max_tool_calls=4"], first_review_turn, None),
    "drop the boundary reviewer": (["reviewers.drop=boundary"], names_boundary, None),
    # the reviewer-table change that stands for dropping a boundary keyword: what a verdict means
    "a low risk is a concern": (["reviewers.risk.low=concern"], low_risk_passes, None),
    # contract acceptance: a limit of the strict schema, changed where the schema declares it
    "at most five tasks": (["contract.delivery.tasks.tasks=5"], more_tasks_than(5), None),
    "a general review without findings": (["contract.delivery.general_review.findings=0"], general_findings, None),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_a_seeded_rule_change_flips_exactly_the_runs_it_should(runs, name):
    changes, expected_of, status = MUTATIONS[name]
    overrides = parse_overrides(changes)
    expected = {run_id: expected_of(values) for run_id, values in runs.items()}
    assert sum(e is not None for e in expected.values()) >= 3, "the stored runs exercise this rule"
    for run_id, values in runs.items():
        replay = replay_values(values, run_id, overrides=overrides)
        flip = replay.first_flip
        got = (flip.kind, flip.recorded, flip.replayed) if flip else None
        assert got == expected[run_id], run_id
        if flip and status:
            assert replay.replayed_status == status, run_id
        if flip and replay.replayed_status is None:
            assert "new model call" in replay.stopped, run_id


def test_replay_over_the_cli_prints_the_figures_and_exits_4_on_a_flip(capsys):
    assert main(["replay", "--eval", str(RECORDS)]) == 0
    out = capsys.readouterr().out
    total = len(load_records(RECORDS))
    assert f"{total} run(s) replayed" in out and "0 with a flipped decision: 0 status change(s), 0 would need" in out
    assert main(["replay", "--eval", str(RECORDS.parent), "--set", "max_manager_reasks=0", "--json"]) == 4
    printed = json.loads(capsys.readouterr().out)
    replays = replay_records(load_records(RECORDS), parse_overrides(["max_manager_reasks=0"]))
    assert printed["replayed"] == total and printed["flipped"] == figures(replays)["flipped"] > 0
    assert printed["status_changes"] == figures(replays)["status_changes"] > 0
    assert printed["needs_model"] == figures(replays)["needs_model"]


@pytest.mark.parametrize(("change", "message"), [
    ("bogus=1", "--set bogus: unknown rule"),
    ("max_manager_reasks=-1", "--set max_manager_reasks: a whole number, 0 or more"),
    ("require_tasks_before_review=maybe", "--set require_tasks_before_review: true or false"),
    ("reviewers.drop=nobody", "--set reviewers.drop: one of general, risk, boundary"),
    ("reviewers.risk.tiny=ok", "--set reviewers.risk.tiny: risk's verdicts are"),
    ("reviewers.risk.low=fine", "--set reviewers.risk.low: one of ok, concern, blocker"),
    ("reviewers.risk.blocker=ok", "--set reviewers.risk.blocker: at least one verdict must block"),
    ("tasklist.max_loops=3", "--set tasklist.max_loops: not a tasklist limit"),
    ("tools.trust=a b", "--set tools.trust: a tool name"),
    ("max_tool_calls", "--set max_tool_calls: give RULE=VALUE"),
    ("contract.delivery.nope.tasks=1", "--set contract.delivery.nope.tasks: contract.<contract>.<field>; contracts:"),
    ("contract.delivery.tasks.task_id=3", "--set contract.delivery.tasks.task_id: not a bounded field of delivery.tasks"),
    ("contract.delivery.tasks.tasks=few", "--set contract.delivery.tasks.tasks: a whole number"),
])
def test_a_bad_change_is_one_line_and_exit_2(capsys, change, message):
    assert main(["replay", "--eval", str(RECORDS), "--set", change]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_replay_needs_something_to_replay_and_a_records_file(tmp_path, capsys):
    assert main(["replay"]) == 2
    assert main(["replay", "--eval", str(tmp_path)]) == 2
    assert "no records.json" in capsys.readouterr().err


def test_a_shared_contract_output_is_stored_once_and_read_back_whole(tmp_path):
    document = json.loads(RECORDS.read_text(encoding="utf-8"))
    named = [o["value_at"] for r in document["records"] for o in r["decisions"]["contract_outputs"]]
    assert len(document["outputs"]) < len(named) / 5 and set(named) == set(range(len(document["outputs"])))
    for record in load_records(RECORDS):
        for output in record["decisions"]["contract_outputs"]:
            assert set(output) == {"contract", "at", "recorded", "value"} and isinstance(output["value"], dict)
    broken = {**document, "outputs": document["outputs"][:1]}
    (tmp_path / "records.json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ValueError, match="names a contract output the file does not hold"):
        load_records(tmp_path)


def test_a_version_1_file_without_contract_outputs_still_replays(tmp_path):
    document = json.loads(RECORDS.read_text(encoding="utf-8"))
    for record in document["records"]:
        del record["decisions"]["contract_outputs"]
    (tmp_path / "records.json").write_text(json.dumps({"version": 1, "records": document["records"]}), encoding="utf-8")
    replays = replay_records(load_records(tmp_path))
    assert figures(replays)["flipped"] == 0
    assert not any(d.kind.startswith("contract:") for r in replays for d in r.decisions)


def test_the_docs_print_what_replay_prints_over_the_stored_records(capsys, monkeypatch):
    """Each ``reins replay --eval tests/evals/eval_records …`` example of the docs (auditing): its figures line
    is the one the command prints, and each run line it shows is one the command prints."""
    readme = (HERE.parent.parent / "docs" / "auditing.md").read_text(encoding="utf-8")
    examples = re.findall(r"^\$ reins replay --eval tests/evals/eval_records(.*)\n((?:[^$`].*\n)*)", readme, re.M)
    assert len(examples) >= 4
    monkeypatch.chdir(HERE.parent.parent)
    for arguments, shown in examples:
        main(["replay", "--eval", "tests/evals/eval_records", *arguments.split()])
        printed = capsys.readouterr().out.splitlines()
        lines = [line for line in shown.splitlines() if line != "…"]
        assert lines[-1] == printed[-1], arguments
        assert set(lines[:-1]) <= set(printed), arguments
