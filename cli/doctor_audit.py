"""``reins doctor --budget``: each graph's worst case under the current configuration, and whether it
fits the user's caps (``REINS_MAX_CALLS`` …)."""

from __future__ import annotations

import json
import os

from reins.cli.errors import EXIT_BAD_INPUT
from reins.policies.audit.budget import over_caps
from reins.runtime.execution.budget import (
    CAP_VARIABLES,
    GRAPHS,
    BudgetExceeded,
    assistant_paths,
    caps_from_env,
    check_caps,
    worst_case,
)
from reins.runtime.llm.models import model_set_from_settings
from reins.runtime.config.settings import Settings

ALLOW_OVER_CAP = "REINS_ALLOW_OVER_CAP"  # start a run whose worst case passes a cap; its ledger stops it there
UNITS = {"calls": "model requests", "output_tokens": "output tokens", "tool_calls": "tool calls",
         "seconds": "seconds (waiting for a person not counted)"}


def chat_tool_deadlines_s(settings: Settings) -> tuple[float, ...]:
    """The deadline of every tool a chat turn may call: the built-in chat tools' and each configured
    MCP server's ``timeout_s`` (read from REINS_MCP_CONFIG; no server is started). A configuration
    that cannot be read adds nothing here: the chat refuses it before its first turn."""
    from reins.runtime.tools.mcp_config import McpConfigError, read_servers
    from reins.runtime.tools.chat_tools import CHAT_SCOPE
    from reins.runtime.tools.mcp_tools import read_config
    from reins.runtime.tools.toolbox import default_registry

    deadlines = [float(tool.timeout_s) for tool in default_registry().for_scope(CHAT_SCOPE)]
    try:
        config = read_config(settings.mcp_config)
        if config is not None:
            deadlines += [spec.timeout_s for spec in read_servers(config).servers]
    except McpConfigError:
        pass
    return tuple(deadlines)


def configured_options(graph: str, settings: Settings) -> dict[str, object]:
    """The options of ``worst_case`` the configuration sets beside the models: the contract mode, and
    for the assistant its tools' deadlines."""
    options: dict[str, object] = {"contract_mode": settings.contract_mode}
    if graph == "assistant":
        options["tool_deadlines_s"] = chat_tool_deadlines_s(settings)
    return options


def budget_report(settings: Settings) -> dict:
    models = model_set_from_settings(settings)
    caps = caps_from_env(os.environ)
    graphs = {}
    for graph in GRAPHS:
        options = configured_options(graph, settings)
        worst = worst_case(graph, models, **options)  # type: ignore[arg-type]
        graphs[graph] = {"worst_case": worst.as_dict(), "over_caps": over_caps(worst, caps)}
        if graph == "assistant":  # which path the bound comes from: a chat turn, or a pipeline inside one
            paths = assistant_paths(models, **options)  # type: ignore[arg-type]
            graphs[graph]["paths"] = {name: path.as_dict() for name, path in paths.items()}
    return {"graphs": graphs, "caps": {CAP_VARIABLES[name]: value for name, value in caps.items()}}


def run_budget(as_json: bool, fuzz: int | None = None) -> int:
    if fuzz is not None:
        return run_fuzz(fuzz, as_json)
    try:
        report = budget_report(Settings.from_env())
    except BudgetExceeded as error:
        print(f"error: {error}")
        return EXIT_BAD_INPUT
    code = EXIT_BAD_INPUT if any(g["over_caps"] for g in report["graphs"].values()) else 0
    if as_json:
        print(json.dumps(report, indent=2))
        return code
    print("Worst case per run, from the configuration alone (retries, fallbacks, re-asks, repairs, bounds)")
    for graph, entry in report["graphs"].items():
        print(f"  {graph}")
        for name, value in entry["worst_case"].items():
            print(f"    {value:>10g} {UNITS[name]}")
        for path, values in entry.get("paths", {}).items():
            print(f"      {path}: " + ", ".join(f"{values[name]:g} {name.replace('_', ' ')}" for name in values))
        for line in entry["over_caps"]:
            print(f"    over your cap: {line}")
    caps = ", ".join(f"{key}={value:g}" for key, value in report["caps"].items()) or "none set"
    print(f"  caps: {caps}")
    return code


def run_fuzz(runs: int, as_json: bool) -> int:
    """``reins doctor --budget --fuzz N``: N adversarial runs in all, split over the three graphs,
    each on one of the fuzz's configurations (model sets that differ per role and task role, slow
    tools); per graph the runs of each kind and path, the largest use observed beside the largest
    bound, the largest share of its own bound a run used (tightness) and the violations (exit 4
    when there is one)."""
    from reins.cli.errors import EXIT_FAILED, UserError
    from reins.evals.budget_fuzz import fuzz_budget, fuzz_report

    if runs < len(GRAPHS):
        raise UserError(f"--fuzz needs at least {len(GRAPHS)} runs (one per graph)")
    results = fuzz_budget(runs)
    if as_json:
        print(json.dumps(fuzz_report(results), indent=2))
    else:
        print_fuzz(results, runs)
    return EXIT_FAILED if any(entry.violations for entry in results.values()) else 0


def print_fuzz(results: dict, runs: int) -> None:
    """The fuzz per graph as ``reins doctor --budget --fuzz`` and ``reins eval --suite budget`` print it."""
    print(f"Budget fuzz: {runs} adversarial runs in all (stage-composed: each stage on the real call machinery, "
          "simulated clock; worst-adversary: the same with every attempt failing but the last, cut off; "
          "full-graph: the compiled graph under perturbed models, wall clock)")
    for graph, entry in results.items():
        kinds = ", ".join(f"{count} {kind.replace('_', '-')}" for kind, count in entry.runs.items())
        print(f"  {graph}: {kinds}")
        if len(entry.paths) > 1:
            print("    paths: " + ", ".join(f"{count} {path}" for path, count in entry.paths.items()))
        ratios = entry.tightness()
        for name in entry.observed:
            print(f"    {name:<14} max {entry.observed[name]:>10.6g} / largest bound {entry.bound[name]:>10.6g}"
                  f"   tightness {ratios[name]:.3f}")
        print(f"    violations: {len(entry.violations)}")
        for line in entry.violations[:5]:
            print(f"      {line}")
    print(f"{sum(len(entry.violations) for entry in results.values())} violation(s)")


def refuse_over_caps(graph: str, **options: object) -> None:
    """Before a run starts: a configuration whose worst case does not fit the user's caps is bad
    input (exit 2), so a run that starts cannot pass a cap — unless the user lets it start anyway
    (``REINS_ALLOW_OVER_CAP=1``): then the run's ledger stops it at the cap (``run_caps``)."""
    from reins.cli.errors import UserError

    try:
        caps = caps_from_env(os.environ)
        if caps and os.environ.get(ALLOW_OVER_CAP, "").strip() not in ("1", "true", "yes"):
            settings = Settings.from_env()
            worst = worst_case(graph, model_set_from_settings(settings), **{**configured_options(graph, settings),
                                                                             **options})  # type: ignore[arg-type]
            check_caps(worst, caps, graph)
    except BudgetExceeded as error:
        raise UserError(str(error)) from None


def run_caps():
    """The run's ledger (``reins.runtime.execution.run_ledger``) under the user's caps: every model request and tool
    call inside is refused before it is made once it would pass one (nothing checked without caps)."""
    from reins.runtime.execution.run_ledger import run_ledger

    caps = caps_from_env(os.environ)
    return run_ledger(caps, {name: CAP_VARIABLES[name] for name in caps})


def run_guards(as_json: bool) -> int:
    """``reins doctor --guards``: every path from a model's output to an action in the three graphs
    (subgraphs included) and the policy that decides it; exit 4 when one is unguarded."""
    from reins.cli.errors import EXIT_FAILED
    from reins.graphs import assistant, delivery_chain, tasklist_agent
    from reins.runtime.execution.graph_shape import guard_coverage

    results = {module.graph.name: guard_coverage(module.graph) for module in (tasklist_agent, delivery_chain, assistant)}
    findings = [line for coverage in results.values() for line in coverage.findings]
    if as_json:
        print(json.dumps({name: {"paths": [p.line() for p in c.paths], "findings": c.findings}
                          for name, c in results.items()}, indent=2))
    else:
        for name, coverage in results.items():
            print(f"{name}: {len(coverage.paths)} path(s) from a model's output to an action")
            for path in coverage.paths:
                print(f"  {path.line()}")
        print(f"{len(findings)} unguarded path(s) or undeclared node(s)" if findings else "every path is guarded")
        for line in findings:
            print(f"  {line}")
    return EXIT_FAILED if findings else 0
