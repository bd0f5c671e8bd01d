"""The runs ``make test-real`` makes and their books: each one a ``reins`` command in its own process
(as a user runs it), its status read from the command's ``--json`` output and compared with the
expected one, Reins' own counts (calls, re-asks, repairs, escalations) beside the server's (tokens,
cached tokens), wall time, and whether anything a user must never see was printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reins.evals.real_model.meter import Meter, totals

ROOT = Path(__file__).resolve().parents[2]
# Never a real key: the harness checks that this value appears in no output.
PLACEHOLDER_KEY = "sk-reins-real-model-placeholder-0000"
NOTES_SERVER = "tests.assistant.mcp.notes_server"
APPROVE = '{"type": "approve"}'
EXIT_PAUSED = 5


@dataclass(frozen=True)
class Step:
    """One ``reins`` command of a run."""

    args: tuple[str, ...]
    json_output: bool = True


@dataclass(frozen=True)
class PlannedRun:
    id: str
    graph: str  # doctor | chat | tasklist | delivery
    steps: tuple[Step, ...]
    expected: tuple[str, ...]  # the statuses that count as right
    limit_s: int  # the time the run should finish within on the reference machine


def plan(*, with_doctor: bool = True) -> list[PlannedRun]:
    """Doctor first (it tells whether the server is usable at all), then chat, tasklist, delivery."""
    runs = [PlannedRun("doctor-check", "doctor", (Step(("doctor", "--check", "--json")),), ("ok",), 600)] \
        if with_doctor else []
    return runs + [
        PlannedRun("chat-calculator", "chat", (Step(("chat", "--once", "Use the calculator: what is (17+25)*3?",
                                                     "--json")),), ("tool_ok",), 600),
        PlannedRun("chat-mcp-approval", "chat", (
            Step(("chat", "--once", 'use notes__add_note on "buy milk"', "--new-thread", "real-mcp"), json_output=False),
            Step(("resume", "real-mcp", "--decision", APPROVE, "--json")),
        ), ("approved_ran_once",), 600),
        PlannedRun("tasklist-v0.2.0-ready", "tasklist", (Step(("tasklist", "docs://versions/v0.2.0-ready.md",
                                                                "--json")),),
                   ("final", "final_with_manual_review_items"), 900),
        PlannedRun("deliver-request-limit-banner", "delivery",
                   (Step(("deliver", "--scenario", "request-limit-banner", "--json")),), ("pass",), 600),
        PlannedRun("deliver-vague-improvement", "delivery",
                   (Step(("deliver", "--scenario", "vague-improvement", "--json")),), ("clarification_required",), 600),
        PlannedRun("deliver-persist-raw-artifacts", "delivery",
                   (Step(("deliver", "--scenario", "persist-raw-artifacts", "--json")),), ("blocked",), 600),
    ]


# ------------------------------------------------------------------------------------ reading outputs


def parse_json(stdout: str) -> dict[str, Any] | None:
    """The command's ``--json`` document (the last line that parses, as progress may precede it)."""
    text = stdout.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else None
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def run_status(run: PlannedRun, exits: Sequence[int], outputs: Sequence[dict[str, Any] | None],
               executions: int = 0) -> str:
    """The status a run ended in, read from what the commands printed (never from what was expected)."""
    last = outputs[-1] if outputs else None
    if run.graph == "doctor":
        return "ok" if exits and exits[-1] == 0 else f"failed (exit {exits[-1] if exits else '?'})"
    if last is None:
        return f"no output (exit {exits[-1] if exits else '?'})"
    if run.graph == "delivery":
        return str(last.get("run_status") or "unknown")
    if run.graph == "tasklist":
        return str(last.get("final_decision") or ("paused" if last.get("paused") else "unknown"))
    if len(run.steps) > 1:  # the approval round trip: paused, approved, ran exactly once
        if exits[0] != EXIT_PAUSED:
            return f"not paused (exit {exits[0]})"
        return "approved_ran_once" if exits[-1] == 0 and executions == 1 else f"resume exit {exits[-1]}, ran {executions}x"
    records = last.get("records") or []
    if any(r.get("ok") and r.get("tool") == "calculator" for r in records):
        return "tool_ok"
    return f"no tool call ({last.get('intent') or 'no intent'})"


def _per_contract(graph: str, output: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    if graph == "tasklist":
        return output.get("contract_metrics") or {}
    return (output.get("metrics") or {}).get("per_contract") or {}


def reins_counts(graph: str, outputs: Sequence[dict[str, Any] | None]) -> dict[str, int]:
    """Reins' own books over a run's commands: model calls (business, encoder, repair), re-asks, repairs,
    escalations, tokens as Reins counted them."""
    counts = {"model_calls": 0, "reasks": 0, "repairs": 0, "escalations": 0, "prompt_tokens": 0, "output_tokens": 0}
    for output in outputs:
        if not output:
            continue
        for contract in _per_contract(graph, output).values():
            counts["model_calls"] += sum(int(contract.get(k, 0)) for k in ("business_calls", "encoder_calls",
                                                                              "repair_calls"))
            counts["repairs"] += int(contract.get("repair_calls", 0))
            counts["escalations"] += int(contract.get("escalations", 0))
            counts["prompt_tokens"] += int(contract.get("input_tokens", 0))
            counts["output_tokens"] += int(contract.get("output_tokens", 0))
        counts["reasks"] += int((output.get("metrics") or {}).get("manager_reasks", 0) or 0)
    return counts


@dataclass
class RunResult:
    id: str
    graph: str
    expected: list[str]
    status: str
    exit_codes: list[int]
    wall_s: float
    limit_s: int
    reins: dict[str, int]
    server: dict[str, Any] | None
    traceback_shown: bool = False
    key_shown: bool = False
    timed_out: bool = False
    responses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def as_expected(self) -> bool:
        return self.status in self.expected and not (self.traceback_shown or self.key_shown or self.timed_out)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "graph": self.graph, "status": self.status, "expected": self.expected,
                "as_expected": self.as_expected, "exit_codes": self.exit_codes, "wall_s": self.wall_s,
                "limit_s": self.limit_s, "within_limit": self.wall_s <= self.limit_s, "reins": self.reins,
                "server": self.server, "traceback_shown": self.traceback_shown, "key_shown": self.key_shown,
                "timed_out": self.timed_out, "responses": self.responses}


# ------------------------------------------------------------------------------------ driving


def environment(home: Path, base_url: str | None) -> dict[str, str]:
    """The commands' environment: a fresh Reins home, the MCP notes server, and either the real server
    (the local recipe the README prints for llama.cpp, timeouts for a CPU) or the offline stand-in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    record = home / "mcp-executions.jsonl"
    mcp = home / "mcp.json"
    home.mkdir(parents=True, exist_ok=True)
    mcp.write_text(json.dumps({"mcpServers": {"notes": {
        "command": sys.executable, "args": ["-m", NOTES_SERVER, "stdio", "normal"],
        "env": {"NOTES_RECORD": str(record)}, "cwd": str(ROOT), "trust_annotations": True}}}))
    env.update({"REINS_HOME": str(home), "REINS_MCP_CONFIG": str(mcp), "REINS_CHECKPOINT": "sqlite",
                "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
    if base_url:
        env.update({
            "OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_API_KEY": PLACEHOLDER_KEY, "REINS_MODEL": "local",
            "REINS_TOOL_CHOICE": "auto", "REINS_TEXT_TOOL_CALLS": "recover",
            "REINS_MAX_TOKENS_MANAGER": "576", "REINS_MAX_TOKENS_TASKLIST": "2048",
            # A small model on a CPU writes ~7 tokens a second: the roles' default bounds (8,192 for the
            # planner and the encoder) let one looping answer run for twenty minutes (seen: a plan call
            # at 7,400 tokens and counting). These fit the largest valid answer the stand-in writes
            # several times over; a cut-off still gets its one repair with the bound doubled.
            "REINS_MAX_TOKENS_PLANNER": "1536", "REINS_MAX_TOKENS_ENCODER": "1536",
            "REINS_MAX_TOKENS_REVIEWER": "1024", "REINS_MAX_TOKENS_SUPERVISOR": "768",
        })
        for role in ("SUPERVISOR", "MANAGER", "PLANNER", "REVIEWER", "ENCODER", "TASKLIST", "CHAT", "POLISH"):
            env[f"REINS_TIMEOUT_{role}"] = os.environ.get("REINS_REAL_TIMEOUT_S", "1200")
    return env


def executions(home: Path) -> int:
    record = home / "mcp-executions.jsonl"
    return len(record.read_text().splitlines()) if record.exists() else 0


def drive(run: PlannedRun, env: Mapping[str, str], meter: Meter | None, *, home: Path,
          timeout_s: float, log: Callable[[str], None] = print) -> RunResult:
    """Run each command of ``run``; the meter is emptied first so the run's responses are its own."""
    if meter is not None:
        meter.take()
    exits: list[int] = []
    outputs: list[dict[str, Any] | None] = []
    shown = ""
    timed_out = False
    started = time.monotonic()
    before = executions(home)
    for step in run.steps:
        try:
            done = subprocess.run([sys.executable, "-m", "reins.cli", *step.args], cwd=ROOT, env=dict(env),
                                  capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as expired:
            timed_out = True
            shown += str(expired.stdout or "") + str(expired.stderr or "")
            exits.append(124)
            outputs.append(None)
            break
        exits.append(done.returncode)
        outputs.append(parse_json(done.stdout) if step.json_output else None)
        shown += done.stdout + done.stderr
    wall = round(time.monotonic() - started, 1)
    responses = meter.take() if meter is not None else []
    status = "timed out" if timed_out else run_status(run, exits, outputs, executions(home) - before)
    result = RunResult(
        id=run.id, graph=run.graph, expected=list(run.expected), status=status, exit_codes=exits, wall_s=wall,
        limit_s=run.limit_s, reins=reins_counts(run.graph, outputs), server=totals(responses) if meter else None,
        traceback_shown="Traceback (most recent call last)" in shown, key_shown=PLACEHOLDER_KEY in shown,
        timed_out=timed_out, responses=[vars(r) for r in responses],
    )
    log(f"{run.id}: {status} (expected {' or '.join(run.expected)}) in {wall:.0f} s")
    return result
