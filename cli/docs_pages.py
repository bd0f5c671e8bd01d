"""The generated parts of the documentation: the API reference from ``reins.__all__``'s docstrings,
and the result tables from the stored runs under ``docs/results/`` (``summary.json`` of ``reins
eval``, the output of ``reins bench --json``). Each lives between ``<!-- generated:NAME -->``
and ``<!-- /generated:NAME -->`` markers; ``python -m reins.cli.docs_pages`` rewrites them and
``--check`` exits 1 when a page differs from what its stored results give (a test runs it).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from reins.cli.diagrams import DOCS
from reins.runtime.config.paths import PROJECT_ROOT

RESULTS = DOCS / "results"


def _block(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- generated:{re.escape(name)} -->\n)(.*?)(<!-- /generated:{re.escape(name)} -->)", re.S)


def api_reference() -> str:
    """One section per public name: its signature and its docstring (a constant: its line of the
    package docstring)."""
    import reins

    parts = []
    for name in reins.__all__:
        value = getattr(reins, name)
        parts.append(f"## `{name}`\n")
        if inspect.isclass(value) or inspect.isroutine(value):
            signature = f"{name}{_signature(value)}"
            kind = "class" if inspect.isclass(value) else "def"
            doc = inspect.cleandoc(value.__dict__.get("__doc__") or "") if inspect.isclass(value) else inspect.getdoc(value)
            parts.append(f"```text\n{kind} {_short(signature)}\n```\n\n{_markdown(doc or '')}\n")
        else:
            line = reins.__doc__[reins.__doc__.index(f"- ``{name}``:"):].split("\n- ")[0].split("\n\n")[0]
            parts.append(_markdown(" ".join(line.split())[2:]) + "\n")
    return "\n".join(parts)


def _signature(value: object) -> str:
    """A context class's own fields, not its metaclass's ``(*args, **kwargs)``."""
    if inspect.isclass(value) and dataclasses.is_dataclass(value):
        init = inspect.signature(value.__init__)
        return str(init.replace(parameters=list(init.parameters.values())[1:]))
    return str(inspect.signature(value))


def _short(signature: str) -> str:
    """A signature without the long reprs of default tables (a scenario list) or this machine's paths."""
    signature = re.sub(r"=\s*\(Scenario\(.*?\)\)(?=, \*|, baselines)", "= SCENARIOS", signature)
    signature = re.sub(r"<object object at 0x[0-9a-f]+>", "<default>", signature)  # a sentinel's address
    return signature.replace(repr(PROJECT_ROOT), "PROJECT_ROOT").replace(str(PROJECT_ROOT), "PROJECT_ROOT")


def _markdown(docstring: str) -> str:
    """reStructuredText's double backticks as Markdown code; a ``::`` block as a fenced one."""
    text = docstring.replace("``", "`")
    return re.sub(r"::\n\n((?:    .*\n?|\n)+)", lambda m: ":\n\n```text\n" + inspect.cleandoc(m.group(1)) + "\n```\n", text)


def eval_table() -> str:
    """The evaluation table of the stored ``reins eval --json`` run."""
    from reins.evals.report import rates_table

    data = json.loads((RESULTS / "eval.json").read_text(encoding="utf-8"))
    rates = data["rates"] if "rates" in data else [data]
    settings = rates[0]["settings"]
    note = (f"Stored run: `reins eval --repeats {settings['repeats']} --perturb "
            f"{','.join(format(r['settings']['rate'], 'g') for r in rates)}` (seed {settings['seed']}), "
            f"`docs/results/eval.json`.\n\n")
    return note + rates_table([SimpleNamespace(settings=r["settings"], summary=r["summary"]) for r in rates]) + "\n"


def bench_figures() -> str:
    data = json.loads((RESULTS / "bench.json").read_text(encoding="utf-8"))["benchmarks"]
    rows = ["| benchmark | measured |", "|---|---:|"]
    for name, value in data.items():  # a benchmark gives one ratio, or several by setting
        parts = value.items() if isinstance(value, dict) else [("", value)]
        rows += [f"| `{name}`{f' ({key})' if key else ''} | {number:.{2 if abs(number) >= 0.1 else 4}f}{' ms' if key.endswith('_ms') else ''} |"
                 for key, number in parts]
    from reins.cli.bench import BENCHMARKS

    missing = [name for name in BENCHMARKS if name not in data]
    note = f" It holds {len(data)} of the {len(BENCHMARKS)} benchmarks; not run: {', '.join(missing)}." if missing else ""
    return (f"Stored run: `reins bench --json`, `docs/results/bench.json`.{note}\n\n" + "\n".join(rows) + "\n")


def agentdojo_table() -> str:
    """The AgentDojo table of the stored ``reins eval --suite agentdojo`` report."""
    from reins.evals.agentdojo import markdown

    report = json.loads((RESULTS / "agentdojo.json").read_text(encoding="utf-8"))
    return (f"Stored run: `reins eval --suite agentdojo` (AgentDojo {report['version']}), "
            f"`docs/results/agentdojo.json`.\n\n" + markdown(report) + "\n")


def agentdojo_adaptive_table() -> str:
    """The tables of the stored ``reins eval --suite agentdojo --attacks adaptive`` report."""
    from reins.evals.agentdojo_adaptive import markdown

    report = json.loads((RESULTS / "agentdojo-adaptive.json").read_text(encoding="utf-8"))
    return ("Stored run: `reins eval --suite agentdojo --attacks adaptive`, "
            "`docs/results/agentdojo-adaptive.json`.\n\n" + markdown(report) + "\n")


GENERATED: dict[str, tuple[str, Callable[[], str]]] = {
    "api-reference": ("reference.md", api_reference),
    "eval-table": ("evaluation.md", eval_table),
    "bench-figures": ("evaluation.md", bench_figures),
    "agentdojo-table": ("prompt-injection.md", agentdojo_table),
    "agentdojo-adaptive-table": ("prompt-injection-adaptive.md", agentdojo_adaptive_table),
}


def rewritten(page: str, text: str) -> str:
    """``text`` of ``page`` with each of its generated blocks rewritten from the stored results."""
    for name, (target, render) in GENERATED.items():
        if target != page:
            continue
        pattern = _block(name)
        if not pattern.search(text):
            raise ValueError(f"docs/{page} has no <!-- generated:{name} --> block")
        content = render()
        text = pattern.sub(lambda m, c=content: m.group(1) + c + m.group(3), text)
    return text


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    stale = []
    for page in dict.fromkeys(target for target, _ in GENERATED.values()):
        path = DOCS / page
        current = path.read_text(encoding="utf-8")
        updated = rewritten(page, current)
        if updated != current:
            stale.append(page)
            if not check:
                path.write_text(updated, encoding="utf-8")
    verb = "differ from the stored results" if check else "rewritten"
    print(f"docs {verb}: {', '.join(stale)}" if stale else "docs are current")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
