"""The delegation fuzzer: seeded sequences of manager turns — the right step, a wrong order, an
unknown tool, a mixed or partial review group, bad arguments, no call, a cut-off turn — decided by
the delegation policy exactly as the manager node decides them (``delegation_verdict``, the re-ask
budget), and recorded in the shape of a run's state, so ``replay_values`` re-decides them.

``python -m reins.evals.delegation_fuzz 150 > tests/delivery/fuzz_sequences.json`` regenerates the stored
set (the same sequences for the same count and seed).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Mapping
from typing import Any

from reins.nodes.delivery.routing import delegation_verdict
from reins.policies.delivery.delegation import DEFAULT_POLICY, PLAN_TOOL, REVIEW_TOOLS, TASK_TOOL, DelegationPolicy, reask_allowed

MAX_TURNS = 12
FUZZ_VERSION = 1
_ARTIFACT_OF = {PLAN_TOOL: "plan", TASK_TOOL: "tasks"}


def _proposal(rng: random.Random, executed: list[str]) -> tuple[list[dict[str, Any]], bool]:
    """One manager turn's calls (and whether it was cut off): mostly the step the phase expects."""
    expected = ([PLAN_TOOL] if PLAN_TOOL not in executed else [TASK_TOOL] if TASK_TOOL not in executed
                else list(REVIEW_TOOLS))
    roll = rng.random()
    if roll < 0.55:
        names = expected
    elif roll < 0.65:
        names = [PLAN_TOOL] if rng.random() < 0.5 else [TASK_TOOL]
    elif roll < 0.75:  # the review group, in part, in full or with an extra tool
        names = rng.sample(REVIEW_TOOLS, rng.randint(1, len(REVIEW_TOOLS)))
        if rng.random() < 0.3:
            names.append(rng.choice([PLAN_TOOL, TASK_TOOL, REVIEW_TOOLS[0]]))
    elif roll < 0.82:
        names = [rng.choice(["deploy-subagent", "shell", "review"])]
    elif roll < 0.9:
        return [], rng.random() < 0.4  # no call, sometimes cut off at the output bound
    else:
        names = [*expected[:1], *rng.sample([PLAN_TOOL, TASK_TOOL], 1)]
    calls = []
    for name in names:
        draw = rng.random()
        args: dict[str, Any] = {} if draw < 0.3 else {"note": f"next step: {name}"}
        if draw > 0.95:
            args = {"note": "x" * 240}  # past the note's bound
        elif draw > 0.9:
            args = {"note": "ok", "path": "/etc/passwd"}  # an argument a sub-agent does not take
        calls.append({"name": name, "args": args})
    return calls, False


def sequence(seed: int, policy: DelegationPolicy = DEFAULT_POLICY) -> dict[str, Any]:
    """One fuzzed run: its manager turns and refusals as the state records them, and its status
    (``reviewed`` once the review group runs, ``failed`` when a refused turn is not asked again)."""
    rng = random.Random(seed)
    executed: list[str] = []
    proposals: list[dict[str, Any]] = []
    refusals: list[dict[str, Any]] = []
    status = "unfinished"  # the turn budget ran out (the graph's own step limit would stop it)
    for turn in range(1, MAX_TURNS + 1):
        calls, cut_off = _proposal(rng, executed)
        artifacts = sorted(_ARTIFACT_OF[name] for name in executed if name in _ARTIFACT_OF)
        earlier = [r for r in refusals if r["executed"] == len(executed)]
        state = {"delegated": list(executed), "manager_refusals": earlier, **dict.fromkeys(artifacts, True)}
        verdict = delegation_verdict(calls, state, policy, cut_off=cut_off)
        proposals.append({"turn": turn, "executed": list(executed), "artifacts": artifacts, "calls": calls,
                          "cut_off": cut_off, "verdict": dict(verdict)})
        if verdict["violation"] is None:
            executed += [call["name"] for call in calls]
            if verdict["next"] == "reviewer":
                status = "reviewed"
                break
            continue
        again = reask_allowed(len(earlier) + 1, policy)
        refusals.append({"turn": turn, "executed": len(executed), "code": verdict["violation"]["code"],
                         "reasked": again})
        if not again:
            status = "failed"
            break
    return {"manager_proposals": proposals, "manager_refusals": refusals, "run_status": status}


def sequences(count: int, seed: int = 0) -> dict[str, Any]:
    return {"version": FUZZ_VERSION, "seed": seed,
            "sequences": [{"id": f"fuzz-{seed}-{i}", "values": sequence(seed * 1_000_003 + i)} for i in range(count)]}


def load_sequences(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    if document.get("version") != FUZZ_VERSION or not isinstance(document.get("sequences"), list):
        raise ValueError(f"not a delegation fuzz file of version {FUZZ_VERSION}")
    return list(document["sequences"])


if __name__ == "__main__":
    print(json.dumps(sequences(int(sys.argv[1]) if len(sys.argv) > 1 else 150), separators=(",", ":")))
