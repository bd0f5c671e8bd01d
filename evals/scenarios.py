"""The evaluation's scenario set: the eight reference cases plus eight more requirements.

Each scenario names its input (a bundled ``demo://scenarios/...`` requirement or a file under
``evals/requirements/``), the status a correct run ends in, and — for the failure cases — which
reviewers fail and how. Failures are produced by wrapping the model (``PerturbedModel`` at rate 1.0
on those reviewers' contracts), never by editing a graph.

The expected status is the controlled chain's semantics. Where a baseline that never revises can
only say "changes needed", ``also_correct`` accepts that (a revision-required requirement is
correctly reported as ``needs_changes`` by a pipeline without revision). Reviewer-failure cases do
not apply to the single agent, which has no separate reviewers to fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS

REQUIREMENTS_DIR = Path(__file__).resolve().parent / "requirements"
# ``controlled_chain_fallback``: the same graph, every role with one fallback model (perturbed
# independently at the same rate), as a deployment with a second provider runs it.
# ``controlled_chain_escalation``: that, and every role with an escalation model (its own independent
# draws at the same rate) for the requests the primary keeps failing (policies.models.escalation).
BASELINES: tuple[str, ...] = ("single_agent", "fixed_multi_agent", "controlled_chain", "controlled_chain_fallback",
                              "controlled_chain_escalation")
CHAIN_BASELINES: frozenset[str] = frozenset({"controlled_chain", "controlled_chain_fallback",
                                             "controlled_chain_escalation"})

# Which contract is "the <role> reviewer" in each baseline that has reviewers.
REVIEW_CONTRACTS: Mapping[str, Mapping[str, str]] = {
    "controlled_chain": {spec.role: spec.contract for spec in DEFAULT_REVIEWERS},
    "controlled_chain_fallback": {spec.role: spec.contract for spec in DEFAULT_REVIEWERS},
    "controlled_chain_escalation": {spec.role: spec.contract for spec in DEFAULT_REVIEWERS},
    "fixed_multi_agent": {role: f"eval.fixed_{role}_review" for role in DEFAULT_REVIEWERS.roles},
}
# Reviewer faults as PerturbedModel kinds: execution_failed, timeout, contract_failure. The raising
# faults are the ones no retry can mend (a 400, a deadline), so a failing reviewer fails every time.
FAULT_KINDS: Mapping[str, str] = {
    "execution_failed": "bad_request", "timeout": "deadline_overrun", "contract_failure": "schema_drift",
}


@dataclass(frozen=True)
class Scenario:
    id: str
    case: str  # the reference case's name, or "extra"
    description: str
    expected: str
    demo: str | None = None  # a bundled scenario id
    file: str | None = None  # a requirement under evals/requirements/
    failing_reviewers: tuple[str, ...] = ()
    fault: str | None = None  # execution_failed | timeout | contract_failure
    also_correct: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if (self.demo is None) == (self.file is None):
            raise ValueError(f"scenario {self.id}: give exactly one of demo or file")
        if bool(self.failing_reviewers) != bool(self.fault) or (self.fault and self.fault not in FAULT_KINDS):
            raise ValueError(f"scenario {self.id}: failing reviewers need one fault kind of {', '.join(FAULT_KINDS)}")

    @property
    def acceptable(self) -> frozenset[str]:
        return frozenset({self.expected}) | self.also_correct

    def payload(self) -> dict[str, str]:
        """The delivery chain's input for this scenario."""
        if self.demo:
            return {"requirement_uri": f"demo://scenarios/{self.demo}/requirement.md"}
        return {"requirement": (REQUIREMENTS_DIR / f"{self.file}.md").read_text(encoding="utf-8")}

    def applies_to(self, baseline: str) -> bool:
        return not self.failing_reviewers or baseline in REVIEW_CONTRACTS

    def fault_contracts(self, baseline: str) -> frozenset[str]:
        """The contracts that fail in this baseline (empty when nothing is injected)."""
        contracts = REVIEW_CONTRACTS.get(baseline, {})
        return frozenset(contracts[role] for role in self.failing_reviewers if role in contracts)


SCENARIOS: tuple[Scenario, ...] = (
    # The eight reference cases.
    Scenario("direct-pass", "direct-pass", "a concrete UI requirement; all three reviews pass", "pass",
             demo="request-limit-banner"),
    Scenario("clarification-required", "clarification-required", "a requirement with nothing concrete to plan",
             "clarification_required", demo="vague-improvement"),
    Scenario("revision-required", "revision-required",
             "a must-sentence about recovery state that the plan misses; one revision", "needs_review",
             demo="resumable-upload", also_correct=frozenset({"needs_changes"})),
    Scenario("boundary-blocked", "boundary-blocked", "asks to persist raw delivery artifacts", "blocked",
             demo="persist-raw-artifacts"),
    Scenario("risk-blocker", "risk-blocker", "depends on an unapproved security component", "blocked",
             demo="sso-security-blocker"),
    Scenario("one-reviewer-failure", "one-reviewer-failure", "the risk reviewer's calls raise", "needs_review",
             demo="request-limit-banner", failing_reviewers=("risk",), fault="execution_failed"),
    Scenario("two-reviewer-failures", "two-reviewer-failures", "the risk and boundary reviewers time out",
             "needs_review", demo="request-limit-banner", failing_reviewers=("risk", "boundary"), fault="timeout"),
    Scenario("all-reviewers-failure", "all-reviewers-failure", "every reviewer's output drifts from its schema",
             "failed", demo="request-limit-banner", failing_reviewers=DEFAULT_REVIEWERS.roles, fault="contract_failure"),
    # Eight more.
    Scenario("register-login", "extra", "authentication: a high risk that does not block but needs a person",
             "needs_review", demo="register-login"),
    Scenario("bypass-review", "extra", "asks the chain to skip its own reviews", "blocked", demo="bypass-review"),
    Scenario("invoice-csv-export", "extra", "a small, concrete export feature", "pass", file="invoice-csv-export"),
    Scenario("dark-mode", "extra", "a concrete UI preference feature", "pass", file="dark-mode"),
    Scenario("vague-reports", "extra", "an improvement wish without a checkable behaviour",
             "clarification_required", file="vague-reports"),
    Scenario("order-history-links", "extra",
             "a must-sentence in the prose the plan misses, for signed-in customers (a high risk: a person reviews)",
             "needs_review", file="order-history-links", also_correct=frozenset({"needs_changes"})),
    Scenario("run-archive", "extra", "an artifact store of delivery outputs (hard boundary)", "blocked",
             file="run-archive"),
    Scenario("payment-provider-switch", "extra", "a dependency with a pending security review", "blocked",
             file="payment-provider-switch"),
    Scenario("general-reviewer-timeout", "extra", "the general reviewer times out on a passing requirement",
             "needs_review", file="invoice-csv-export", failing_reviewers=("general",), fault="timeout"),
)

REFERENCE_CASES: tuple[str, ...] = (
    "direct-pass", "clarification-required", "revision-required", "boundary-blocked", "risk-blocker",
    "one-reviewer-failure", "two-reviewer-failures", "all-reviewers-failure",
)


def scenario_by_id(scenario_id: str) -> Scenario:
    """The evaluation scenario with this id (``SCENARIOS`` lists them); ``KeyError`` otherwise.

    Example: ``scenario_by_id("direct-pass").expected``
    """

    for scenario in SCENARIOS:
        if scenario.id == scenario_id:
            return scenario
    raise KeyError(f"unknown scenario {scenario_id!r}; known: {', '.join(s.id for s in SCENARIOS)}")
