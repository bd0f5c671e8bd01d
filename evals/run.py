"""``run_evaluation``: scenarios × baselines × repeats on one ModelSet, optionally perturbed.

Every run gets fresh wrappers: the reviewer faults a scenario prescribes (``PerturbedModel`` at rate
1.0 on those contracts) inside, the random perturbation at ``rate`` outside. Each (repeat, scenario)
derives its own seed, shared by every baseline: the baselines meet the same draws (a paired
comparison), while two scenarios whose calls send the same prompt (the same requirement, or a manager
turn that reads no requirement) still draw independently, as two runs against a real provider do.
A rerun with the same arguments reproduces the same injections. ``models=None`` uses the configured
models (``REINS_MODEL`` …), else the offline one.
``kinds`` narrows the random perturbation to some kinds or families (``evals/perturbed.py``), e.g.
to see what a pipeline reaches when only the faults it may legitimately recover from occur.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel

from reins.runtime.llm.labels import OFFLINE_LABEL
from reins.runtime.llm.models import ModelSet, default_model_set
from reins.runtime.resources import ResourceResolver
from reins.evals.baselines import run_baseline
from reins.evals.perturbed import PERTURBATIONS, PerturbedModel, expand_kinds
from reins.policies.audit.evaluation import MAX_REPEATS
from reins.evals.scenarios import BASELINES, CHAIN_BASELINES, FAULT_KINDS, SCENARIOS, Scenario
from reins.evals.scorer import RunRecord, per_scenario, summarise



@dataclass
class EvaluationResults:
    settings: dict[str, Any]
    records: list[RunRecord] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        return summarise(self.records)

    @property
    def scenarios(self) -> dict[str, dict[str, dict[str, Any]]]:
        return per_scenario(self.records)

    def as_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "summary": self.summary, "scenarios": self.scenarios,
                "records": [r.as_dict() for r in self.records]}


def run_seed(seed: int, repeat: int, scenario: str) -> int:
    """One run's seed. The scenario is part of it: the perturbation draws from the prompt, and without
    it every scenario sharing a prompt would share that call's fault, counting one draw many times."""
    return int(hashlib.sha256(f"{seed}:{repeat}:{scenario}".encode()).hexdigest()[:12], 16)


def fallback_seed(seed: int) -> int:
    """The fallback models' seed: their draws are independent of the primary models'."""
    return int(hashlib.sha256(f"fallback:{seed}".encode()).hexdigest()[:12], 16)


def escalation_seed(seed: int) -> int:
    """The escalation models' seed: their draws are independent of the primary's and the fallbacks'."""
    return int(hashlib.sha256(f"escalation:{seed}".encode()).hexdigest()[:12], 16)


# How the evaluation labels the stand-ins beside a role's own model (the offline model serves all).
FALLBACK_SUFFIX, ESCALATION_SUFFIX = "(fallback)", "(escalation)"


def wrap_models(models: ModelSet, *, rate: float, seed: int, scenario: Scenario, baseline: str,
                kinds: Sequence[str] = PERTURBATIONS):
    """The run's ModelSet and its random-perturbation wrappers (to read what they injected). For
    ``controlled_chain_fallback`` every role also gets one fallback: its model under the same faults
    (the scenario's, and the random ones at the same rate, drawn independently);
    ``controlled_chain_escalation`` adds one escalation model per role under the same faults, drawn
    independently again: the stand-in is no stronger than the primary, so what the row gains is the
    mechanism's, not a better model's."""
    fault_contracts = scenario.fault_contracts(baseline)
    perturbers: list[PerturbedModel] = []

    def wrapper(wrap_seed: int):
        wrapped: dict[int, BaseChatModel] = {}

        def wrap(model: BaseChatModel) -> BaseChatModel:
            if id(model) not in wrapped:  # roles that share a model keep sharing its wrapper
                current = model
                if fault_contracts:
                    current = PerturbedModel(current, 1.0, seed, kinds=(FAULT_KINDS[scenario.fault],),
                                             contracts=fault_contracts)
                if rate > 0:
                    current = PerturbedModel(current, rate, wrap_seed, kinds=kinds)
                    perturbers.append(current)
                wrapped[id(model)] = current
            return wrapped[id(model)]

        return wrap

    primary = wrapper(seed)
    if all(models.label(role) == OFFLINE_LABEL for role in models.models):
        # The stand-in's faults are simulated and raised at once: there is no provider to recover, so
        # a retry after one need not wait (a backoff slept here would only lengthen the run).
        models = replace(models, policies={role: replace(models.policy(role), backoff_initial_s=0.0)
                                           for role in models.models})
    # The roles' own models keep their labels through the wrappers (the primary-served share reads them).
    run_models = replace(models.with_models({role: primary(model) for role, model in models.models.items()}),
                         labels={role: models.label(role) for role in models.models})
    if baseline in ("controlled_chain_fallback", "controlled_chain_escalation"):
        backup = wrapper(fallback_seed(seed))
        run_models = replace(run_models, fallbacks={
            role: ((f"{models.label(role)} {FALLBACK_SUFFIX}", backup(model)),) for role, model in models.models.items()})
    if baseline == "controlled_chain_escalation":
        stronger = wrapper(escalation_seed(seed))
        run_models = run_models.with_escalations({
            role: (f"{models.label(role)} {ESCALATION_SUFFIX}", stronger(model)) for role, model in models.models.items()})
    return run_models, perturbers


def primary_share(outcome_served: Mapping[str, int], primary_labels: Collection[str]) -> tuple[int, int]:
    """(calls the roles' own models answered, calls any model answered) from ``model:<label>`` counts."""
    served = sum(outcome_served.values())
    return sum(count for label, count in outcome_served.items() if label in primary_labels), served


def run_evaluation(
    repeats: int = 3,
    rate: float = 0.0,
    seed: int = 0,
    models: ModelSet | None = None,
    *,
    scenarios: Sequence[Scenario] = SCENARIOS,
    baselines: Sequence[str] = BASELINES,
    review_timeout_s: float | None = None,
    kinds: Sequence[str] = PERTURBATIONS,
    on_run: Callable[[RunRecord], None] | None = None,
) -> EvaluationResults:
    """The three-baseline evaluation: every scenario under every baseline, ``repeats`` times, with
    ``rate`` of the model's outputs perturbed (seeded by ``seed``), on ``models`` (default: the configured
    models, ``REINS_MODEL``; the offline stand-in when unset).

    Example: ``run_evaluation(repeats=1, rate=0.2, scenarios=[scenario_by_id("direct-pass")]).summary``
    """

    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"repeats must be between 1 and {MAX_REPEATS}")
    if not 0.0 <= rate <= 1.0:
        raise ValueError("the perturbation rate must be between 0 and 1")
    unknown = set(baselines) - set(BASELINES)
    if unknown:
        raise ValueError(f"unknown baselines: {', '.join(sorted(unknown))}")
    kinds = expand_kinds(tuple(kinds))
    models = models or default_model_set()
    resolver = ResourceResolver()
    results = EvaluationResults(settings={
        "repeats": repeats, "rate": rate, "seed": seed, "scenarios": [s.id for s in scenarios],
        "baselines": list(baselines), "models": sorted({models.label(role) for role in models.models}),
        "kinds": list(kinds),
    })
    for repeat in range(repeats):
        for scenario in scenarios:
            for baseline in baselines:
                if not scenario.applies_to(baseline):
                    continue
                run_models, perturbers = wrap_models(models, rate=rate, seed=run_seed(seed, repeat, scenario.id),
                                                     scenario=scenario, baseline=baseline, kinds=kinds)
                options = {"review_timeout_s": review_timeout_s} if baseline in CHAIN_BASELINES else {}
                outcome = run_baseline(baseline, scenario.payload(), run_models, resolver, **options)
                injected: dict[str, int] = {}
                injected_on: dict[str, tuple[str, ...]] = {}
                for perturber in perturbers:
                    for injection in perturber.injected:
                        injected[injection.kind] = injected.get(injection.kind, 0) + 1
                        injected_on[injection.contract] = (*injected_on.get(injection.contract, ()), injection.kind)
                # A review the scenario makes fail was meant to fail: it decides nothing by itself.
                faulted = scenario.fault_contracts(baseline)
                stops = tuple(stop for stop in outcome.stops if stop[0] not in faulted)
                primary_calls, served_calls = primary_share(outcome.served, {models.label(r) for r in models.models})
                record = RunRecord(
                    baseline=baseline, scenario=scenario.id, repeat=repeat, expected=scenario.expected,
                    acceptable=tuple(sorted(scenario.acceptable)), status=outcome.status,
                    completed_reviews=outcome.completed_reviews, blocker_seen=outcome.blocker_seen,
                    revised=outcome.revised, calls=outcome.calls, repair_calls=outcome.repair_calls,
                    tokens=outcome.tokens, elapsed_ms=outcome.elapsed_ms, injected=injected, error=outcome.error,
                    failure=outcome.failure, rate=rate, reasks=outcome.reasks, retries=outcome.retries,
                    stops=stops, injected_on=injected_on, primary_calls=primary_calls, served_calls=served_calls,
                    decisions=outcome.decisions,
                )
                results.records.append(record)
                if on_run:
                    on_run(record)
    return results
