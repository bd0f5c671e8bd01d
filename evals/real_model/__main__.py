"""``python -m reins.evals.real_model`` (``make test-real``): obtain llama-server and the model, run the three
graphs on it and on the offline stand-in, write the result file and the documentation's table.

Exit 0 when every run on the real model ended in an expected status with no traceback and no key
shown; 1 otherwise; 2 when the server or the model could not be obtained or started."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from reins.evals.prompt_prefix import passes as prefix_passes
from reins.evals.real_model.meter import Meter, metering_proxy
from reins.evals.real_model.obtain import BUILD_FLAGS, LLAMA_CPP, QWEN_CODER_1_5B, ObtainError, obtain_model, obtain_server
from reins.evals.real_model.runs import ROOT, drive, environment, plan
from reins.evals.real_model.server import llama_server, server_flags
from reins.evals.real_model.table import render

RESULT = ROOT / "docs" / "real-models.json"
DOC = ROOT / "docs" / "real-models.md"
STANDIN = "standin"
REAL = "llama.cpp"


def machine(load_before: tuple[float, ...]) -> dict[str, Any]:
    cpu = "unknown"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30) if hasattr(os, "sysconf") \
        else None
    return {"cpus": os.cpu_count(), "cpu": cpu, "memory_gib": memory_gib, "system": platform.system(),
            "load_average_at_start": [round(x, 1) for x in load_before],
            "load_average_at_end": [round(x, 1) for x in os.getloadavg()]}


def _target(kind: str, label: str, results: list, started: float, extra: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, "label": label, "wall_s": round(time.monotonic() - started, 1),
            "runs": [r.as_dict() for r in results], **extra}


def run_standin(only: set[str] | None, timeout_s: float) -> dict[str, Any]:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reins-standin-") as home:
        env = environment(Path(home), None)
        results = [drive(r, env, None, home=Path(home), timeout_s=timeout_s)
                   for r in plan(with_doctor=False) if not only or r.id in only]
    return _target(STANDIN, "offline stand-in (rule-based, not a language model)", results, started,
                   {"prefix_cache": prefix_passes()})


def run_real(tools: Path, only: set[str] | None, timeout_s: float) -> dict[str, Any]:
    started = time.monotonic()
    binary = obtain_server(tools)
    model = obtain_model(tools)
    meter = Meter()
    with tempfile.TemporaryDirectory(prefix="reins-real-") as home, \
            llama_server(binary, model, tools / "llama-server.log") as upstream, \
            metering_proxy(upstream, meter) as proxy:
        env = environment(Path(home), proxy)
        results = [drive(r, env, meter, home=Path(home), timeout_s=timeout_s)
                   for r in plan() if not only or r.id in only]
    return _target(REAL, QWEN_CODER_1_5B.label, results, started, {
        "model": {"label": QWEN_CODER_1_5B.label, "packages": f"{QWEN_CODER_1_5B.prefix}1..{QWEN_CODER_1_5B.parts} "
                  f"{QWEN_CODER_1_5B.version}", "bytes": QWEN_CODER_1_5B.size, "sha256": QWEN_CODER_1_5B.sha256},
        "server": {"package": f"{LLAMA_CPP.name} {LLAMA_CPP.version} (sdist, built here)",
                   "build_flags": list(BUILD_FLAGS), "flags": server_flags()},
    })


def merge(previous: dict[str, Any] | None, targets: list[dict[str, Any]]) -> dict:
    """The new targets replace those of the same kind, run by run: a run measured now replaces its earlier
    measurement, a run not re-run (``--only``) keeps its earlier one (each run carries the time and the load
    it was measured at); targets of another kind are kept whole."""
    earlier = {t["kind"]: t for t in (previous or {}).get("targets", [])}
    merged = []
    for target in targets:
        fresh = {run["id"] for run in target["runs"]}
        kept = [run for run in earlier.pop(target["kind"], {}).get("runs", []) if run["id"] not in fresh]
        ids = [run.id for run in plan()]
        runs = sorted(target["runs"] + kept, key=lambda r: ids.index(r["id"]) if r["id"] in ids else len(ids))
        merged.append({**target, "runs": runs})
    order = {REAL: 0, STANDIN: 1}
    return {"schema": 1, "targets": sorted([*earlier.values(), *merged], key=lambda t: order.get(t["kind"], 2))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reins.evals.real_model", description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, default=ROOT / ".tools", help="cache for the server and the model")
    parser.add_argument("--result", type=Path, default=RESULT, help="the result file to write")
    parser.add_argument("--doc", type=Path, default=DOC, help="the table to regenerate from it")
    parser.add_argument("--only", default="", help="comma-separated run ids")
    parser.add_argument("--skip-standin", action="store_true")
    parser.add_argument("--standin-only", action="store_true")
    parser.add_argument("--obtain-only", action="store_true", help="build the server, fetch the model, stop")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds one command may take")
    args = parser.parse_args(argv)
    only = {s for s in args.only.split(",") if s} or None
    load_before = os.getloadavg()
    if args.obtain_only:
        try:
            print(obtain_server(args.tools), obtain_model(args.tools), sep="\n")
        except ObtainError as exc:
            print(f"real-model run: {exc}", file=sys.stderr)
            return 2
        return 0
    targets = []
    if not args.skip_standin:
        targets.append(run_standin(only, args.timeout))
    if not args.standin_only:
        try:
            targets.insert(0, run_real(args.tools, only, args.timeout))
        except (ObtainError, RuntimeError) as exc:
            print(f"real-model run: {exc}", file=sys.stderr)
            return 2
    measured_at = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for target in targets:
        target["measured_at"] = measured_at
        target["machine"] = machine(load_before)
        for run in target["runs"]:
            run["measured_at"] = measured_at
            run["load_average"] = target["machine"]["load_average_at_start"]
    previous = json.loads(args.result.read_text()) if args.result.exists() else None
    result = merge(previous, targets)
    args.result.parent.mkdir(parents=True, exist_ok=True)
    args.result.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    args.doc.write_text(render(result))
    print(f"wrote {args.result.relative_to(ROOT) if args.result.is_relative_to(ROOT) else args.result} and "
          f"{args.doc.name}")
    failed = [r["id"] for t in targets for r in t["runs"] if not r["as_expected"]]
    if failed:
        print(f"not as expected: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
