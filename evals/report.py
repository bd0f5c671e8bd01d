"""The evaluation's outputs: a markdown report (tables) and a PNG plot (matplotlib, Agg backend)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reins.evals.ceiling import chain_ceiling
from reins.evals.perturbed import PERTURBATIONS
from reins.evals.scenarios import CHAIN_BASELINES, SCENARIOS
from reins.evals.scorer import VIOLATIONS

NAMES: Mapping[str, str] = {
    "single_agent": "single agent",
    "fixed_multi_agent": "fixed multi-agent",
    "controlled_chain": "controlled chain",
    "controlled_chain_fallback": "controlled chain + fallback",
    "controlled_chain_escalation": "controlled chain + escalation",
}
CASES = {s.id: s.case for s in SCENARIOS}
FALLBACK_BASELINES = frozenset({"controlled_chain_fallback", "controlled_chain_escalation"})

NOTES = """\
## How to read this

- **status correct**: the run ended in the scenario's expected status (a pipeline that never
  revises is also right to say `needs_changes` for a revision-required requirement).
- **consistency**: per scenario, the share of repeats that agree with the most common status;
  averaged over scenarios.
- **hard-rule violations**: a blocker not ending in `blocked` (a blocker the run's own reviews
  reported, under any other status; or a blocker requirement let through as `pass` /
  `needs_changes`), `pass` without a completed review from every reviewer, `pass` after a revision. A run that
  stops (`failed`, `needs_review`) without having seen a blocker is at worst a wrong status.
- **calls** count every request to a model (business, encoder, repair calls and their retries);
  **calls per pass run** only the runs that ended `pass`; **retries** are calls repeated after a
  transient provider failure (a provider timeout, a connection error); **resampled manager turns**
  are manager turns the delegation policy refused and the chain asked again, unchanged (the
  refused call never ran). **tokens** are what the model reported (the offline model reports len/4
  estimates); **latency** is wall-clock per run.
- Reviewer-failure scenarios do not apply to the single agent (it has no separate reviewers).
- The fixed multi-agent pipeline reads verdicts from marker lines and skips a review that failed or
  whose verdict it cannot read; the single agent's status is its `STATUS` line (`unreadable` when
  none is recognisable).
- On the offline model every baseline applies the same rule-based checklists, so differences at
  rate 0 come from structure (failure handling, revision), not from judgement.
- **why runs were wrong** gives each wrong run one cause, from the calls whose failure decided it
  (the call a failed run stopped at, every review that did not complete) and what was injected into
  them: `non_retryable_fault` (a deadline overrun or a 400 on such a call: no rule may retry it),
  `reask_budget_spent` (a manager turn refused past the re-ask budget: by default refused, asked
  again unchanged, refused again), `invalid_after_repair` (invalid output, and its one repair too),
  `retryable_twice` (a provider timeout or connection error, and its one retry failed too),
  `wrong_status` (nothing decisive failed; the run ended with another status). A run with several
  such calls counts under the first cause in that order.
- Raised perturbations come as providers and deadlines raise them: `provider_timeout`
  (`openai.APITimeoutError`) and `connection_error` (`openai.APIConnectionError`) are retried per
  the role's policy; `deadline_overrun` (a bare `TimeoutError`, what the run's own deadline raises,
  injected only into calls that run under a deadline — the reviews; elsewhere that draw is a
  provider timeout) and `bad_request` (a 400) never are.
- **controlled chain + fallback** is the same graph with one fallback model per role, perturbed
  independently at the same rate: a final provider failure (a 400, a retryable failure whose retry
  failed too) moves the call to it; a deadline overrun does not.
- **controlled chain + escalation** adds one escalation model per role, perturbed independently at
  the same rate as well (so no stronger than the primary): a manager turn refused again after its
  re-ask, or a contract still invalid after its repair, goes to it once, under the same policy and
  checks. **primary served** is the share of answered calls the roles' own models answered.
- **ceiling (fault model)**: the share of chain runs in which no call fails for good under the fault
  model alone (`evals/ceiling.py`); invalid output is left out, since the repair may still save it.
"""


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _range(values: Mapping[str, float], digits: int = 0) -> str:
    fmt = f"{{:.{digits}f}}"
    return f"{fmt.format(values['median'])} [{fmt.format(values['min'])}–{fmt.format(values['max'])}]"


def _median(values: Mapping[str, float]) -> str:
    return f"{values['median']:g}" if values["max"] else "–"


def summary_table(summary: Mapping[str, Mapping[str, Any]]) -> str:
    """One Markdown row per baseline of an evaluation's summary.

    Example: ``summary_table(run_evaluation(repeats=1).summary)``
    """

    lines = [
        "| baseline | runs | status correct | consistency | hard-rule violations | failed runs | "
        "resampled manager turns | retries | calls/run median [range] | calls/pass run median | repair calls | "
        "tokens/run median | latency ms median [range] |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for baseline, s in summary.items():
        lines.append(
            f"| {NAMES.get(baseline, baseline)} | {s['runs']} | {s['correct']}/{s['runs']} ({_pct(s['correct_rate'])}) | "
            f"{_pct(s['consistency'])} | {s['violations']} | {s['failed_runs']} | {s['reasks']} | {s['retries']} | "
            f"{_range(s['calls'])} | {_median(s['calls_per_pass_run'])} | "
            f"{s['repair_calls']} | {s['tokens']['median']:.0f} | {_range(s['latency_ms'])} |"
        )
    return "\n".join(lines)


def ceiling_cell(baseline: str, rate: float) -> str:
    """The ceiling the fault model allows a chain row (``evals/ceiling.py``); ``–`` for the others."""
    if baseline not in CHAIN_BASELINES:
        return "–"
    return _pct(chain_ceiling(rate, fallback=baseline in FALLBACK_BASELINES))


def primary_cell(summary: Mapping[str, Any]) -> str:
    """The share of answered calls the roles' own models served (not a fallback or escalation model)."""
    share = summary.get("primary_served")
    return "–" if share is None else f"{100 * share:.1f}%"


def rates_table(results: Sequence[Any]) -> str:
    """One row per baseline and perturbation rate: what ``reins eval`` prints; beside a chain's
    status correct, the ceiling its fault model allows."""
    lines = [
        "| baseline | rate | runs | status correct | ceiling (fault model) | hard-rule violations | failed runs | "
        "resampled manager turns | retries | calls/run median [range] | calls/pass run median | primary served |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    baselines = list(dict.fromkeys(b for result in results for b in result.summary))
    for baseline in baselines:
        for result in results:
            s = result.summary.get(baseline)
            if s is None:
                continue
            lines.append(
                f"| {NAMES.get(baseline, baseline)} | {result.settings['rate']:g} | {s['runs']} | "
                f"{s['correct']}/{s['runs']} ({_pct(s['correct_rate'])}) | "
                f"{ceiling_cell(baseline, result.settings['rate'])} | {s['violations']} | {s['failed_runs']} | "
                f"{s['reasks']} | {s['retries']} | {_range(s['calls'])} | {_median(s['calls_per_pass_run'])} | "
                f"{primary_cell(s)} |"
            )
    return "\n".join(lines)


def violations_table(summary: Mapping[str, Mapping[str, Any]]) -> str:
    lines = ["| baseline | " + " | ".join(VIOLATIONS) + " |", "|---|" + "---:|" * len(VIOLATIONS)]
    for baseline, s in summary.items():
        lines.append(f"| {NAMES.get(baseline, baseline)} | "
                     + " | ".join(str(s["violations_by_rule"][code]) for code in VIOLATIONS) + " |")
    return "\n".join(lines)


def injected_table(summary: Mapping[str, Mapping[str, Any]]) -> str:
    lines = ["| baseline | " + " | ".join(PERTURBATIONS) + " |", "|---|" + "---:|" * len(PERTURBATIONS)]
    for baseline, s in summary.items():
        lines.append(f"| {NAMES.get(baseline, baseline)} | "
                     + " | ".join(str(s["injected"].get(kind, 0)) for kind in PERTURBATIONS) + " |")
    return "\n".join(lines)


def failures_table(summary: Mapping[str, Mapping[str, Any]]) -> str:
    lines = ["| baseline | where the run stopped | runs |", "|---|---|---:|"]
    for baseline, s in summary.items():
        lines += [f"| {NAMES.get(baseline, baseline)} | {cause} | {count} |" for cause, count in s["failures"].items()]
    return "\n".join(lines) if len(lines) > 2 else "No run failed."


def causes_table(summary: Mapping[str, Mapping[str, Any]]) -> str:
    lines = ["| baseline | cause | wrong runs |", "|---|---|---:|"]
    for baseline, s in summary.items():
        lines += [f"| {NAMES.get(baseline, baseline)} | {cause} | {count} |" for cause, count in s["wrong_causes"].items()]
    return "\n".join(lines) if len(lines) > 2 else "No run was wrong."


def _kinds_note(settings: Mapping[str, Any]) -> str:
    kinds = settings.get("kinds") or PERTURBATIONS
    return "" if tuple(kinds) == PERTURBATIONS else f" (only {', '.join(kinds)})"


def scenario_table(scenarios: Mapping[str, Mapping[str, Mapping[str, Any]]], baselines: list[str]) -> str:
    lines = ["| scenario | case | expected | " + " | ".join(NAMES.get(b, b) for b in baselines) + " |",
             "|---|---|---|" + "---|" * len(baselines)]
    for scenario, row in scenarios.items():
        expected = next(iter(row.values()))["expected"]
        cells = []
        for baseline in baselines:
            cell = row.get(baseline)
            if cell is None:
                cells.append("n/a")
                continue
            mark = " ⚠" * bool(cell["violations"])
            cells.append(f"{cell['status']} ({cell['correct']}/{cell['runs']}){mark}")
        lines.append(f"| {scenario} | {CASES.get(scenario, '')} | {expected} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown_report(results: Any) -> str:
    """The whole evaluation report as Markdown (what ``reins eval`` writes to ``report.md``).

    Example: ``markdown_report(run_evaluation(repeats=1))``
    """

    settings, summary = results.settings, results.summary
    header = (
        f"Model: {', '.join(settings['models'])} · perturbation rate {settings['rate']:g}{_kinds_note(settings)} · "
        f"seed {settings['seed']} · "
        f"{settings['repeats']} repeat(s) · {len(settings['scenarios'])} scenarios"
    )
    return "\n\n".join([
        "# Reins evaluation: three baselines",
        header,
        summary_table(summary),
        "## Hard-rule violations by rule",
        violations_table(summary),
        "## Per scenario\n\nMost common status, correct runs / runs; ⚠ marks a hard-rule violation.",
        scenario_table(results.scenarios, list(summary)),
        "## Why runs failed",
        failures_table(summary),
        "## Why runs were wrong",
        causes_table(summary),
        "## Injected perturbations (random, at the given rate; scenario faults not counted)",
        injected_table(summary),
        NOTES,
    ])


def write_plot(results: Any, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # no display: write files only
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    summary = results.summary
    names = [NAMES.get(b, b) for b in summary]
    colours = ["#9e9e9e", "#f0a35e", "#3b7dd8"][: len(names)]
    figure, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    correct = [100 * s["correct_rate"] for s in summary.values()]
    axes[0].bar(names, correct, color=colours)
    axes[0].set_ylim(0, 100)
    axes[0].set_title("Status correct (%)")
    axes[1].bar(names, [s["violations"] for s in summary.values()], color=colours)
    axes[1].set_title("Hard-rule violations (total)")
    axes[1].yaxis.set_major_locator(MaxNLocator(integer=True))
    medians = [s["calls"]["median"] for s in summary.values()]
    errors = [[m - s["calls"]["min"] for m, s in zip(medians, summary.values(), strict=True)],
              [s["calls"]["max"] - m for m, s in zip(medians, summary.values(), strict=True)]]
    axes[2].bar(names, medians, color=colours, yerr=errors, capsize=4)
    axes[2].set_title("Model calls per run (median, range)")
    for axis in axes:
        axis.tick_params(axis="x", labelrotation=15)
    settings = results.settings
    figure.suptitle(f"Reins evaluation · rate {settings['rate']:g} · {settings['repeats']} repeat(s) · "
                    f"{len(settings['scenarios'])} scenarios")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def sweep_report(results: Sequence[Any]) -> str:
    """Several perturbation rates: the per-rate table first, then each rate's full report."""
    first = results[0].settings
    rates = ", ".join(f"{result.settings['rate']:g}" for result in results)
    header = (
        f"Model: {', '.join(first['models'])} · perturbation rates {rates}{_kinds_note(first)} · seed {first['seed']} · "
        f"{first['repeats']} repeat(s) · {len(first['scenarios'])} scenarios"
    )
    parts = ["# Reins evaluation: three baselines", header, rates_table(results)]
    for result in results:
        body = markdown_report(result).split("\n\n", 1)[1]  # without the title
        parts.append(f"## Rate {result.settings['rate']:g}\n\n" + body.replace("\n## ", "\n### "))
    return "\n\n".join(parts)


def write_report(results: Any, out_dir: Path) -> dict[str, Path]:
    """``report.md`` and ``plot.png`` in ``out_dir`` (created when missing). ``results`` is one
    evaluation, or a list of them at several rates (the plot shows the last).

    Example: ``write_report(run_evaluation(repeats=1), Path("eval"))["plot"]``
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    report = out_dir / "report.md"
    runs = list(results) if isinstance(results, (list, tuple)) else [results]
    text = markdown_report(runs[0]) if len(runs) == 1 else sweep_report(runs)
    report.write_text(text + "\n", encoding="utf-8")
    return {"report": report, "plot": write_plot(runs[-1], out_dir / "plot.png")}
