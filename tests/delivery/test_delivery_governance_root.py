"""Own governance and rubrics: a team's root (REINS_GOVERNANCE_ROOT or the ``governance_root``
context) replaces the bundled documents it contains, under the same sandbox rules as ``docs://``;
the report says which set was used."""

from __future__ import annotations

import os

import pytest

from reins.graphs.delivery_chain import build_graph
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.resources import MAX_FILE_BYTES, ResourceError, ResourceResolver
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.config.settings import Settings, SettingsError

BANNER = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}

BOUNDARIES = """# Delivery boundaries

## Out of remit (refused before planning)

- Turning off reviews. Signals: skip the review

## Hard boundaries (blocked)

- User-facing banners need the design council's approval first. Signals: banner

## Needs review (guarded areas)

- Billing. Signals: invoice
"""


@pytest.fixture
def team_root(tmp_path):
    root = tmp_path / "team"
    (root / "governance").mkdir(parents=True)
    (root / "governance" / "delivery-boundaries.md").write_text(BOUNDARIES, encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def no_env_root(monkeypatch):
    monkeypatch.delenv("REINS_GOVERNANCE_ROOT", raising=False)


def test_bundled_set_lets_the_banner_through(monkeypatch):
    result = build_graph(models=OfflineModel()).invoke(BANNER)
    assert result["run_status"] == "pass"
    assert "Governance and rubrics: bundled set" in result["report"]


def test_a_custom_boundary_from_the_environment_blocks_it(team_root, monkeypatch):
    monkeypatch.setenv("REINS_GOVERNANCE_ROOT", str(team_root))
    result = build_graph(models=OfflineModel()).invoke(BANNER)
    assert result["run_status"] == "blocked"
    boundary = next(r for r in result["artifacts"]["reviews"] if r["metadata"]["review_type"] == "boundary")
    assert boundary["metadata"]["boundary_status"] == "blocked"
    assert "design council" in result["report"]
    assert "Governance and rubrics: custom set (Delivery boundaries); bundled: Engineering rules" in result["report"]


def test_the_same_through_the_graph_context(team_root):
    graph = build_graph(models=OfflineModel())
    assert graph.invoke(BANNER, context={"governance_root": str(team_root)})["run_status"] == "blocked"
    assert graph.invoke(BANNER)["run_status"] == "pass"  # per run: the next run is bundled again


def test_custom_documents_reach_the_reviewer_prompt(team_root, monkeypatch):
    (team_root / "rubrics").mkdir()
    (team_root / "rubrics" / "risk.md").write_text("# Risk rubric\n\nTEAM-RISK-RUBRIC-7\n", encoding="utf-8")
    monkeypatch.setenv("REINS_GOVERNANCE_ROOT", str(team_root))
    model = _recording_offline()
    build_graph(models=model).invoke(BANNER)
    def prompt(contract: str) -> str:
        return "\n".join(str(m.content) for m in model.prompts[contract])

    assert "TEAM-RISK-RUBRIC-7" in prompt("delivery.risk_review")
    assert "design council" in prompt("delivery.boundary_review")
    assert "design council" not in prompt("delivery.plan")  # the planner is not shown the boundaries


def _recording_offline():
    from pydantic import PrivateAttr

    class Recording(OfflineModel):
        _prompts: dict = PrivateAttr(default_factory=dict)

        @property
        def prompts(self):
            return self._prompts

        def respond(self, call):
            self._prompts[call.contract] = call.messages
            return super().respond(call)

    return Recording()


@pytest.mark.parametrize("problem", ["symlink-escape", "too-large", "not-utf8"])
def test_a_custom_document_breaking_a_sandbox_rule_stops_the_run_before_any_model_call(team_root, tmp_path, problem):
    target = team_root / "governance" / "engineering-rules.md"
    if problem == "symlink-escape":
        outside = tmp_path / "outside.md"
        outside.write_text("secret", encoding="utf-8")
        os.symlink(outside, target)
    elif problem == "too-large":
        target.write_text("x" * (MAX_FILE_BYTES + 1), encoding="utf-8")
    else:
        target.write_bytes(b"\xff\xfe\x00bad")
    model = ScriptedModel({})
    result = build_graph(models=model).invoke(BANNER, context={"governance_root": str(team_root)})
    assert result["run_status"] == "failed"
    assert model.calls == []
    assert "Stopped at: load" in result["report"] and str(tmp_path) not in result["report"]


def test_a_missing_context_root_is_refused(tmp_path):
    model = ScriptedModel({})
    result = build_graph(models=model).invoke(BANNER, context={"governance_root": str(tmp_path / "nope")})
    assert result["run_status"] == "failed" and model.calls == []
    assert "governance root does not name an existing directory" in result["report"]


def test_resolver_reads_custom_first_with_the_docs_sandbox(team_root):
    resolver = ResourceResolver(governance_root=team_root)
    boundaries = resolver.read("demo://governance/delivery-boundaries.md")
    assert boundaries.origin == "custom" and "design council" in boundaries.text
    rules = resolver.read("demo://governance/engineering-rules.md")
    assert rules.origin == "bundled"
    assert ResourceResolver().read("demo://governance/delivery-boundaries.md").origin == "bundled"
    for uri in ("demo://governance/../governance/delivery-boundaries.md", "demo://rubrics//etc/passwd"):
        with pytest.raises(ResourceError):
            resolver.read(uri)
    # scenarios never come from a governance root
    (team_root / "scenarios" / "x").mkdir(parents=True)
    (team_root / "scenarios" / "x" / "requirement.md").write_text("mine", encoding="utf-8")
    with pytest.raises(ResourceError, match="not found"):
        resolver.read("demo://scenarios/x/requirement.md")


def test_settings_validate_the_environment_root(team_root, tmp_path):
    assert Settings.from_env({}).governance_root is None
    assert Settings.from_env({"REINS_GOVERNANCE_ROOT": str(team_root)}).governance_root == team_root.resolve()
    with pytest.raises(SettingsError, match="REINS_GOVERNANCE_ROOT"):
        Settings.from_env({"REINS_GOVERNANCE_ROOT": str(tmp_path / "missing")})
