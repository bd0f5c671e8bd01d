"""N processes open one fresh database together: each opens the checkpointer and the memory store
(which create or migrate their tables) right after a shared barrier, then writes and reads back a
checkpoint and a note. Every process must succeed.

The suite runs it with 20 processes on each backend; run it at a larger scale once with
``.venv/bin/python -m reins.benchmarks.schema_race --processes 60 --backend sqlite`` (or ``--backend postgres
--url postgresql://…`` against a fresh database). It prints how many processes failed and why.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

BARRIER_TIMEOUT_S = 120


def _open_and_use(backend: str, target: str, index: int) -> None:
    """One process's work: open both, write a checkpoint and a note, read them back."""
    from langgraph.checkpoint.base import empty_checkpoint

    from reins.runtime.config.settings import Settings
    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.runtime.persistence.memory_store import open_store

    settings = Settings(checkpoint=backend, checkpoint_url=target if backend == "postgres" else None)
    where = {} if backend == "postgres" else {"path": Path(target) / "checkpoints.db"}
    with open_checkpointer(backend, url=settings.checkpoint_url, **where) as saver:
        config = {"configurable": {"thread_id": f"race-{index}", "checkpoint_ns": ""}}
        saver.put(config, empty_checkpoint(), {"source": "input", "step": -1}, {})
        if saver.get_tuple(config) is None:
            raise AssertionError("the checkpoint written was not read back")
    store_where = {} if backend == "postgres" else {"path": Path(target) / "memory.db"}
    with open_store(settings, **store_where) as opened:
        opened.store.put(("race",), f"note-{index}", {"text": f"note {index}"})
        if opened.store.get(("race",), f"note-{index}") is None:
            raise AssertionError("the note written was not read back")


def _import_everything(backend: str) -> None:
    """Import before the barrier what an open imports lazily, so the opens themselves meet."""
    import importlib

    from reins.runtime.persistence.embeddings import memory_index

    memory_index()
    names = ["langgraph.checkpoint.sqlite", "langgraph.store.sqlite", "sqlite_vec"] if backend == "sqlite" else [
        "langgraph.checkpoint.postgres", "langgraph.store.postgres", "psycopg"]
    for name in ["reins.runtime.persistence.checkpoint", "reins.runtime.persistence.memory_store", *names]:
        importlib.import_module(name)


def _worker(backend: str, target: str, index: int, barrier: Any, results: Any) -> None:
    try:
        _import_everything(backend)

        barrier.wait(BARRIER_TIMEOUT_S)
        _open_and_use(backend, target, index)
        results.put((index, ""))
    except BaseException as error:  # noqa: BLE001 - reported, not swallowed
        last = traceback.format_exception_only(type(error), error)[-1].strip()
        results.put((index, f"{type(error).__name__}: {last[:300]}"))


def race_opens(backend: str, target: str, processes: int) -> list[str]:
    """Start ``processes`` processes that open ``target`` (a directory for SQLite, a PostgreSQL URL of a
    fresh database) at the same moment; return the failures (empty when every one succeeded)."""
    _import_everything(backend)  # once, in the parent: forked workers start with it loaded
    context = multiprocessing.get_context("fork")  # separate processes, each with its own connections
    barrier = context.Barrier(processes)
    results = context.Queue()
    workers = [context.Process(target=_worker, args=(backend, target, index, barrier, results))
               for index in range(processes)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=BARRIER_TIMEOUT_S * 2) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    return [f"process {index}: {failure}" for index, failure in sorted(outcomes) if failure]


def fresh_postgres_database(url: str, name: str) -> str:
    """Create database ``name`` on the server of ``url``; return its URL."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return url.rsplit("/", 1)[0] + "/" + name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=60)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--url", help="a PostgreSQL server's URL; a fresh database is created on it")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    failed = 0
    kinds: Counter[str] = Counter()
    for round_number in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            if args.backend == "postgres":
                if not args.url:
                    parser.error("--url is required with --backend postgres")
                target = fresh_postgres_database(args.url, f"reins_race_{round_number}")
            else:
                target = tmp
            failures = race_opens(args.backend, target, args.processes)
        failed += len(failures)
        kinds.update(failure.split(": ", 1)[1].split(":")[0] for failure in failures)
        for failure in failures[:5]:
            print(failure)
    total = args.processes * args.rounds
    print(f"{args.backend}: {failed} of {total} processes failed ({args.rounds} rounds of {args.processes})"
          + (f"; {dict(kinds)}" if kinds else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
