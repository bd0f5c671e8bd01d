"""Reins on the LangGraph Agent Server with two processes on one PostgreSQL and one Redis.

The tests run in file order and share one cluster (the ``cluster`` fixture, conftest.py):
1. one process alone, then a second one: runs per minute of the delivery chain on the stand-in with
   200 ms per model call, and three pauses taken on the first process (a review, a question, an
   approval) plus a note remembered through it;
2. 100 concurrent runs of the three graphs spread over both: none lost, none started twice (each
   process's own log), every outcome the one a single process gives;
3. two racing approvals through different processes: the write runs once, the other is refused;
4. ``kill -9`` of the process inside an approved MCP write while it holds other runs too: every run
   finishes on the survivor, the write comes back as taken-and-dispatched (never run again unasked),
   and ``run_again`` sends it with the same idempotency key;
5. the pauses of (1) resumed, and the note recalled, on a process that never saw them.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from deploy.scale.availability import missing

if missing():
    pytest.skip(missing(), allow_module_level=True)

from langgraph_sdk import get_client, get_sync_client  # noqa: E402

from deploy.scale.cluster import HEARTBEAT_S, JOBS_PER_PROCESS, LATENCY_GRAPH, Server, versions  # noqa: E402
from deploy.scale.report import REPORT  # noqa: E402
from deploy.scale.workload import (  # noqa: E402
    outcome,
    reference_outcomes,
    runs_started,
    starts_by_run,
    timed_batch,
    workload,
)
from tests.assistant.mcp.servers import config, executions, stdio_server  # noqa: E402

pytestmark = pytest.mark.integration
LATENCY_INPUT = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
THROUGHPUT_RUNS = 4 * JOBS_PER_PROCESS
PAUSES: dict[str, dict] = {}  # taken on the first process, resumed on another in the last test
MEMORY = {"user_id": "scale-user", "memory_scope": "user"}


def _client(server: Server):
    return get_sync_client(url=server.url, timeout=600)


def _error(client, thread_id: str, run_id: str) -> str:
    """A finished run's error ("" when it succeeded)."""
    joined = client.runs.join(thread_id, run_id)
    return "" if client.runs.get(thread_id, run_id)["status"] == "success" else json.dumps(joined)


def _rate(seconds: float) -> float:
    return THROUGHPUT_RUNS / seconds * 60


def test_one_process_then_two_runs_per_minute_and_pauses_taken_on_the_first(cluster, tmp_path_factory):
    first = cluster.start("a")
    REPORT.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()))
    timed_batch([first.url], [(LATENCY_GRAPH, LATENCY_INPUT)] * 2)  # graphs loaded, connections warm
    alone, results = timed_batch([first.url], [(LATENCY_GRAPH, LATENCY_INPUT)] * THROUGHPUT_RUNS)
    assert {r["status"] for r in results} == {"success"}

    client = _client(first)
    review = client.threads.create()["thread_id"]
    client.runs.wait(review, "tasklist_agent", input={"request": "/tasklist docs://versions/v0.2.0-ready.md"},
                     context={"human_review": True})
    question = client.threads.create()["thread_id"]
    client.runs.wait(question, "assistant", input={"messages": [{"role": "user", "content": 'use ask_user on "Which city?"'}]})
    record = tmp_path_factory.mktemp("pauses") / "executions.jsonl"
    approval_context = {"mcp_config": config(notes=stdio_server(record))}
    approval = client.threads.create()["thread_id"]
    client.runs.wait(approval, "assistant", context=approval_context,
                     input={"messages": [{"role": "user", "content": 'use notes__add_note on "buy milk"'}]})
    kinds = [client.threads.get_state(t)["interrupts"][0]["value"]["kind"] for t in (review, question, approval)]
    assert kinds == ["strategy_review", "question", "tool_approval"]
    remembered = client.runs.wait(client.threads.create()["thread_id"], "assistant", context=MEMORY,
                                  input={"messages": [{"role": "user", "content": "remember that I deploy on Fridays"}]})
    assert "Fridays" in remembered["reply"]
    PAUSES.update(review=review, question=question, approval=approval, record=record, context=approval_context,
                  host=first.name)

    second = cluster.start("b")
    timed_batch([second.url], [(LATENCY_GRAPH, LATENCY_INPUT)] * 2)
    both, results = timed_batch([first.url, second.url], [(LATENCY_GRAPH, LATENCY_INPUT)] * THROUGHPUT_RUNS)
    assert {r["status"] for r in results} == {"success"}
    ran_by = [sum(1 for run_id, _ in runs_started(s.log) if run_id in {r["run_id"] for r in results})
              for s in (first, second)]
    REPORT.append(
        f"throughput ({THROUGHPUT_RUNS} delivery runs, stand-in with 200 ms per model call, {JOBS_PER_PROCESS} jobs "
        f"per process): one process {_rate(alone):.0f} runs/min ({alone:.1f} s), two processes {_rate(both):.0f} "
        f"runs/min ({both:.1f} s; {ran_by[0]} + {ran_by[1]} runs) -> x{alone / both:.2f}")
    assert min(ran_by) > 0, f"the second process took no run: {ran_by}"
    assert alone / both > 1.2, "a second process should add throughput on a latency-bound load"


def test_a_hundred_concurrent_runs_over_both_none_lost_none_twice_same_outcomes(cluster):
    first, second = cluster.servers
    pairs = workload(100)
    expected = reference_outcomes(pairs)
    _, results = timed_batch([first.url, second.url], pairs)
    assert len(results) == 100 and {r["status"] for r in results} == {"success"}
    wrong = [(r["key"], outcome(r["graph_id"], r["values"]), expected[r["key"]]) for r in results
             if outcome(r["graph_id"], r["values"]) != expected[r["key"]]]
    assert not wrong, wrong[:3]
    # What runs.join answered, against what the thread keeps (the outcomes above): the same unless the
    # server answers a join before the run's last values are readable.
    early = [r["key"] for r in results if outcome(r["graph_id"], r["joined"] or {}) != expected[r["key"]]]
    starts = starts_by_run([first.log, second.log])
    twice = [(r["run_id"], starts[r["run_id"]]) for r in results if starts[r["run_id"]] != 1]
    assert twice == [], f"runs started twice, or never (see {first.log.parent})"
    per_process = [sum(1 for run_id, _ in runs_started(s.log) if run_id in {r["run_id"] for r in results})
                   for s in (first, second)]
    assert min(per_process) > 0, per_process
    REPORT.append(f"100 concurrent runs of the three graphs: 100 succeeded, each started once "
                  f"({per_process[0]} on one process, {per_process[1]} on the other), outcomes as in one process; "
                  f"runs.join answered other values than the thread kept for {len(early)} {sorted(set(early))[:3]}")


def test_two_racing_approvals_through_different_processes_run_the_write_once(cluster, tmp_path):
    first, second = cluster.servers
    record = tmp_path / "executions.jsonl"
    context = {"mcp_config": config(notes=stdio_server(record, slow_s=1.5))}
    one, other = _client(first), _client(second)
    thread_id = one.threads.create()["thread_id"]
    one.runs.wait(thread_id, "assistant", context=context,
                  input={"messages": [{"role": "user", "content": 'use notes__slow_note on "buy milk"'}]})
    runs = [c.runs.create(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context,
                          multitask_strategy="enqueue") for c in (one, other)]
    errors = sorted(_error(other, thread_id, run["run_id"]) for run in runs)
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]
    # The loser reads that the decision was taken: still paused when it read the claim ("already
    # taken"), or after the winner's run had finished ("not waiting").
    assert errors[0] == "" and "resume refused" in errors[1], errors
    assert "already taken" in errors[1] or "not waiting" in errors[1], errors
    refusal = json.loads(errors[1])["__error__"]["message"]
    assert "\n" not in refusal
    REPORT.append(f"racing approvals through two processes: the write ran once; the other: {refusal[:160]}")


def _holder(record: Path, servers: list[Server]) -> Server:
    """The server process whose stdio MCP server is writing ``record`` (its child)."""
    pids = {s.proc.pid: s for s in servers}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"NOTES_RECORD={record}".encode() not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            pid = int(entry.name)
            while pid > 1 and pid not in pids:
                pid = int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if pid in pids:
            return pids[pid]
    raise AssertionError("no server process holds the MCP write")


def _wait_for(condition, what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_kill_9_inside_an_approved_write_every_run_finishes_on_the_other(cluster, tmp_path):
    servers = list(cluster.servers)
    record = tmp_path / "executions.jsonl"
    context = {"mcp_config": config(notes=stdio_server(record, slow_s=600))}  # in flight until the kill
    client = _client(servers[0])
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "assistant", context=context,
                     input={"messages": [{"role": "user", "content": 'use notes__slow_note on "pay rent"'}]})
    approve = client.runs.create(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context)
    _wait_for(lambda: len(executions(record)) == 1, "the approved write to start")
    victim = _holder(record, servers)
    (survivor,) = [s for s in servers if s is not victim]
    load = [(c.threads.create()["thread_id"], c) for c in [_client(s) for s in servers] * (2 * JOBS_PER_PROCESS)]
    load = [(t, c.runs.create(t, LATENCY_GRAPH, input=LATENCY_INPUT)["run_id"]) for t, c in load]
    ids = {run_id for _, run_id in load}
    _wait_for(lambda: any(run_id in ids for run_id, _ in runs_started(victim.log)), "the victim to hold load runs")
    killed_at = time.monotonic()
    victim.kill()
    held = {run_id for run_id, _ in runs_started(victim.log) if run_id in ids}

    async def finish() -> dict[str, tuple[str, float]]:
        sdk = get_client(url=survivor.url, timeout=600)

        async def one(thread: str, run_id: str) -> tuple[str, tuple[str, float]]:
            await sdk.runs.join(thread, run_id)
            return run_id, ((await sdk.runs.get(thread, run_id))["status"], time.monotonic() - killed_at)

        return dict(await asyncio.gather(*(one(t, r) for t, r in [*load, (thread_id, approve["run_id"])])))

    finished = asyncio.run(finish())
    assert {finished[r][0] for r in ids} == {"success"}, "a load run was lost"
    retried = {run_id for run_id, attempt in runs_started(survivor.log) if attempt > 1}
    assert held & retried, "no run of the killed process was taken over"
    other = _client(survivor)
    error = _error(other, thread_id, approve["run_id"])
    assert "already taken" in error and "dispatched" in error and "run_again" in error, error
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "pay rent"})], "run again unasked"
    recovery = max(finished[r][1] for r in (held & retried) | {approve["run_id"]})

    again = {"mcp_config": config(notes=stdio_server(record))}
    other.runs.wait(thread_id, "assistant", command={"resume": {"type": "run_again"}}, context=again)
    assert len(executions(record)) == 2
    keys = Path(f"{record}.keys").read_text().splitlines()
    assert len(keys) == 2 and keys[0] == keys[1] and keys[0] != "None", keys
    REPORT.append(
        f"kill -9 of the process holding {len(held & retried)} runs and an approved MCP write: every run finished on the "
        f"other; recovery (kill -> last of its runs done) {recovery:.1f} s with LG_BG_JOB_HEARTBEAT={HEARTBEAT_S}; "
        f"the write came back as dispatched, ran again only on run_again, same idempotency key")


def test_pauses_taken_on_a_gone_process_resume_on_another_and_recall_the_note(cluster):
    for server in cluster.servers:  # the process that took the pauses is gone
        if server.name == PAUSES["host"] and server.alive:
            server.stop()
    live = [s for s in cluster.servers if s.alive] or [cluster.start("c")]
    client = _client(live[0])
    result = client.runs.wait(PAUSES["review"], "tasklist_agent", command={"resume": {"type": "approve"}})
    assert result["final_decision"] == "final"
    answered = client.runs.wait(PAUSES["question"], "assistant", command={"resume": "Paris"})
    assert answered["records"][0]["output"] == "Paris"
    approved = client.runs.wait(PAUSES["approval"], "assistant", command={"resume": {"type": "approve"}},
                                context=PAUSES["context"])
    assert approved["records"][0]["output"] == "stored: buy milk"
    assert executions(PAUSES["record"]) == [json.dumps({"tool": "add_note", "text": "buy milk"})]
    recalled = client.runs.wait(client.threads.create()["thread_id"], "assistant", context=MEMORY,
                                input={"messages": [{"role": "user", "content": "when do I deploy?"}]})
    assert "Fridays" in recalled["reply"], recalled["reply"]
    REPORT.append(f"a review, a question and an approval taken on process {PAUSES['host']} resumed on process "
                  f"{live[0].name} after it was gone; a note remembered there recalled here")
