"""``reins eval [--repeats N] [--perturb RATE[,RATE…]] [--perturb-kinds KIND[,KIND…]] [--seed S] [--out DIR]
[--json]``: the three-baseline evaluation; ``reins eval --suite agentdojo [--limit N]
[--agentdojo-suite NAME] [--trust all|default] [--attacks fixed|adaptive]``: the prompt-injection suites
(optional group ``agentdojo``); ``--attacks adaptive`` runs the suite written against the policy.

Runs the scenario set on the configured models (``REINS_MODEL`` …; the offline model when none is
set), optionally under a seeded ``PerturbedModel`` at one or more rates, writes ``report.md``,
``plot.png`` and ``summary.json`` (what the docs' table is generated from) to the out directory and
prints one row per baseline and rate: status correct, hard-rule violations, failed runs, resampled
manager turns, retries and calls per run (or, with ``--json``, the summaries and per-scenario results). One progress line per run goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from reins.policies.text.redaction import redact
from reins.cli.errors import EXIT_FAILED, EXIT_OK, UserError
from reins.cli.render import print_json, progress_bar, styled, table, write

EVAL_DIR = "eval"  # in the home for runs (``reins.runtime.persistence.home``) unless --out names another directory


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "eval", help="the three-baseline evaluation: single agent, fixed multi-agent, controlled chain"
    )
    parser.add_argument("--repeats", type=int, default=3, metavar="N", help="runs per scenario and baseline (1-20)")
    parser.add_argument("--perturb", default="0", metavar="RATE[,RATE...]",
                        help="share of model calls disturbed by the seeded PerturbedModel (0-1); "
                             "several rates separated by commas, e.g. 0,0.1,0.2")
    parser.add_argument("--perturb-kinds", metavar="KIND[,KIND...]",
                        help="only these perturbation kinds or families, e.g. "
                             "rephrased_verdict,schema_drift,extra_fields,wrong_enum,provider_timeout,connection_error")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the perturbations")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where report.md and plot.png go (default: eval/ in REINS_HOME; see reins doctor)")
    parser.add_argument("--scenario", action="append", metavar="ID", help="only these scenarios (repeatable)")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.add_argument("--suite", choices=("scenarios", "agentdojo", "budget"), default="scenarios",
                        help="scenarios: the three baselines (default); agentdojo: the prompt-injection suites "
                             "(needs the optional group: uv sync --extra agentdojo); budget: the worst-case "
                             "budget fuzz (--runs adversarial runs, each checked against its printed bound)")
    parser.add_argument("--runs", type=int, default=10_000, metavar="N",
                        help="budget: adversarial runs in all (default 10000)")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="agentdojo: at most N user and N injection tasks per suite (a quick run)")
    parser.add_argument("--agentdojo-suite", action="append", metavar="NAME",
                        help="agentdojo: only this suite (repeatable): banking, slack, travel, workspace")
    parser.add_argument("--trust", action="append", choices=("all", "default"),
                        help="agentdojo: only this trust setting (repeatable; default: both)")
    parser.add_argument("--attacks", choices=("fixed", "adaptive"), default="fixed",
                        help="agentdojo: fixed: AgentDojo's own attack texts (default); adaptive: injections written "
                             "against the data-flow policy (obfuscated, encoded, split, reversed, paraphrased, "
                             "laundered, recombined, exfiltrating through reads), both trust settings, declared and "
                             "undeclared tools")
    parser.set_defaults(handler=run)


def _check(args: argparse.Namespace) -> None:
    from reins.policies.audit.evaluation import MAX_REPEATS

    if not 1 <= args.repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be between 1 and {MAX_REPEATS}")
    args.rates = _rates(args.perturb)
    args.kinds = _kinds(args.perturb_kinds)
    if args.out is None:
        from reins.runtime.persistence.home import home_file

        args.out = home_file(EVAL_DIR)
    if args.out.exists() and not args.out.is_dir():
        raise UserError("--out must name a directory")


def _rates(text: str) -> list[float]:
    rates = []
    for part in str(text).split(","):
        try:
            rate = float(part)
        except ValueError:
            rate = math.nan
        if not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
            raise UserError("--perturb is a rate between 0 and 1, or several separated by commas, e.g. 0,0.1,0.2")
        rates.append(rate)
    if len(set(rates)) != len(rates):
        raise UserError("--perturb names a rate twice")
    return rates


def _kinds(text: str | None) -> tuple[str, ...]:
    from reins.policies.audit.evaluation import PERTURBATIONS, expand_kinds

    if text is None:
        return PERTURBATIONS
    try:
        return expand_kinds(tuple(part.strip() for part in text.split(",") if part.strip()))
    except ValueError:
        raise UserError(f"--perturb-kinds takes kinds or families of: {', '.join(PERTURBATIONS)}, timeout, exception") from None


def _scenarios(ids: list[str] | None):
    from reins.evals.scenarios import SCENARIOS

    if not ids:
        return SCENARIOS
    known = {s.id: s for s in SCENARIOS}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UserError(f"unknown scenario {redact(unknown[0], 80)}; known: {', '.join(known)}")
    return tuple(known[i] for i in dict.fromkeys(ids))


def _print_rates(markdown: str) -> None:
    """The results table: on a terminal a table whose cells wrap to its width (eleven columns do not fit
    80 as Markdown cells, which rich would cut short), elsewhere the Markdown as it is."""
    if not styled(sys.stdout):
        write(markdown)
        return
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in markdown.splitlines() if line.startswith("|") and not line.startswith("|---")]
    table(rows[0], rows[1:], folded=rows[0])


def run_adaptive(args: argparse.Namespace) -> int:
    """The adaptive attack suite; agentdojo-adaptive.md (the tables) and .json go to the out directory."""
    try:
        from reins.evals.agentdojo_adaptive import markdown, run_adaptive as run_suite
    except ImportError:
        raise UserError("AgentDojo is not installed: uv sync --extra agentdojo (or pip install 'agent-reins[agentdojo]')")
    try:
        report = run_suite(progress=lambda line: print(line, file=sys.stderr))
    except ImportError:
        raise UserError("AgentDojo is not installed: uv sync --extra agentdojo") from None
    return _reported(args, report, markdown(report), "agentdojo-adaptive", write)


def run_agentdojo(args: argparse.Namespace) -> int:
    """Every AgentDojo pair through the assistant's tool loop and data-flow policy; report.md (the
    table) and report.json go to the out directory."""
    if args.attacks == "adaptive":
        return run_adaptive(args)
    try:
        from reins.evals.agentdojo import SUITES, TRUST_SETTINGS, markdown, run_all
    except ImportError:
        raise UserError("AgentDojo is not installed: uv sync --extra agentdojo (or pip install 'agent-reins[agentdojo]')")
    if args.limit is not None and args.limit < 1:
        raise UserError("--limit must be at least 1")
    suites = tuple(dict.fromkeys(args.agentdojo_suite or SUITES))
    if unknown := [name for name in suites if name not in SUITES]:
        raise UserError(f"unknown AgentDojo suite {redact(unknown[0], 40)}; known: {', '.join(SUITES)}")
    trusts = tuple(dict.fromkeys(args.trust or TRUST_SETTINGS))
    try:
        report = run_all(suites, trusts, progress=lambda line: print(line, file=sys.stderr), limit=args.limit)
    except ImportError:
        raise UserError("AgentDojo is not installed: uv sync --extra agentdojo") from None
    return _reported(args, report, markdown(report), "agentdojo", _print_rates)


def _reported(args: argparse.Namespace, report: Any, table_text: str, stem: str, show: Any) -> int:
    """``<stem>.md`` (the table) and ``<stem>.json`` written to the out directory; the table shown."""
    out = args.out if args.out is not None else _default_out()
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.md").write_text(table_text + "\n", encoding="utf-8")
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    if args.json:
        print_json(report)
    else:
        show(table_text)
        print(f"\nreport: {out / f'{stem}.md'}", file=sys.stderr)
    return EXIT_OK


def _default_out() -> Path:
    from reins.runtime.persistence.home import home_file

    return home_file(EVAL_DIR)


def run_budget_fuzz(args: argparse.Namespace) -> int:
    """``--suite budget``: the budget fuzz (``reins.evals.budget_fuzz``): every run's calls, output tokens,
    tool calls and seconds against the worst case printed for its configuration; budget_fuzz.json
    goes to the out directory; exit 4 when a run passed its bound."""
    from reins.cli.doctor_audit import print_fuzz
    from reins.evals.budget_fuzz import fuzz_budget, fuzz_report
    from reins.runtime.execution.budget import GRAPHS

    if not len(GRAPHS) <= args.runs <= 1_000_000:
        raise UserError(f"--runs must be between {len(GRAPHS)} and 1000000")
    every = 500  # a progress line per this many runs

    with progress_bar(math.ceil(args.runs / every)) as advance:
        def progress(done: int) -> None:
            if done % every == 0 or done == args.runs:
                advance(f"  {done} of {args.runs} budget fuzz runs")

        results = fuzz_budget(args.runs, seed=args.seed, progress=progress)
    report = {"runs": args.runs, "seed": args.seed, "graphs": fuzz_report(results)}
    out = args.out if args.out is not None else _default_out()
    out.mkdir(parents=True, exist_ok=True)
    (out / "budget_fuzz.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    if args.json:
        print_json(report)
    else:
        print_fuzz(results, args.runs)
        print(f"\nreport: {out / 'budget_fuzz.json'}", file=sys.stderr)
    return EXIT_FAILED if any(entry.violations for entry in results.values()) else EXIT_OK


def run(args: argparse.Namespace) -> int:
    if args.suite == "agentdojo":
        return run_agentdojo(args)
    if args.suite == "budget":
        return run_budget_fuzz(args)
    _check(args)  # the arguments first: the evaluation loads LangGraph, LangChain and the provider clients
    # The CLI is the application edge: it sits above the evaluation.
    from reins.evals.records import write_records
    from reins.evals.report import rates_table, write_report
    from reins.evals.run import run_evaluation
    from reins.evals.scenarios import BASELINES

    scenarios = _scenarios(args.scenario)

    total = len(args.rates) * args.repeats * sum(s.applies_to(b) for s in scenarios for b in BASELINES)
    with progress_bar(total) as advance:
        def progress(record) -> None:
            advance(f"  {record.rate:<4g} {record.baseline:<18} {record.scenario:<26} r{record.repeat + 1}  "
                    f"{record.status:<22} {record.elapsed_ms} ms")

        runs = [run_evaluation(args.repeats, rate, args.seed, scenarios=scenarios, kinds=args.kinds, on_run=progress)
                for rate in args.rates]
    paths = write_report(runs if len(runs) > 1 else runs[0], args.out)
    paths["records"] = write_records(runs, args.out)  # what reins replay --eval re-decides
    rates = []
    for results in runs:
        data = results.as_dict()
        rates.append({"settings": data["settings"], "summary": data["summary"], "scenarios": data["scenarios"]})
    # The stored result the docs' evaluation table is generated from (docs/results/eval.json).
    paths["summary"] = args.out / "summary.json"
    paths["summary"].write_text(json.dumps({"rates": rates}, indent=1) + "\n", encoding="utf-8")
    if args.json:
        files = {name: str(path) for name, path in paths.items()}
        print_json({**rates[0], "files": files} if len(rates) == 1 else {"rates": rates, "files": files})
    else:
        _print_rates(rates_table(runs))
        print(f"\nreport: {paths['report']}\nplot:   {paths['plot']}\nrecords: {paths['records']}\n"
              f"summary: {paths['summary']}", file=sys.stderr)
    return EXIT_OK
