"""Many writers on one results store: DuckDB file vs PostgreSQL.

N processes each write P partitions of R rows of ``test_results`` (one
``replace_partition`` each: delete + insert in one transaction), then replace
every one of them once more (the re-run case), all at the same time; one
process then reads every partition back. Reports the write wall time (all
processes), the read time, conflicts (a write that raised) and rows lost or
duplicated (expected rows vs rows read).

    python -m benchmarks.store_writers --postgres   # both stores, on a throwaway local Postgres
    python -m benchmarks.store_writers              # the DuckDB file only

The issue's shape is 4 processes x 50 partitions x 1,000 rows (``--processes``,
``--partitions``, ``--rows`` to change). The slow test of concurrent writers
(tests/store/test_many_writers.py) calls ``run`` with the same code.
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass
class WriterFigures:
    store: str
    write_s: float
    read_s: float
    conflicts: int
    expected_rows: int
    rows_read: int
    duplicated: int

    @property
    def lost(self) -> int:
        return max(0, self.expected_rows - (self.rows_read - self.duplicated))


def rows_for(eval_date: str, skill_version: str, n: int, attempt: int) -> pd.DataFrame:
    skill, _, version = skill_version.partition("@")
    return pd.DataFrame({
        "eval_date": eval_date, "skill_version": skill_version, "skill": skill, "version": version,
        "run_id": f"run-{attempt}", "suite": "bench", "test_id": [f"case-{i:05d}" for i in range(n)],
        "target": "model", "trial": 0, "category": None, "score": [(i % 10) / 10 for i in range(n)],
        "verdict": "pass", "status": "graded", "reason": f"attempt {attempt}"})


def _writer(db: str, worker: int, partitions: int, rows: int, out: "multiprocessing.Queue") -> None:
    from eval_pipelines.store.connection import Partition, connect, replace_partition

    conflicts = 0
    for attempt in (1, 2):  # written, then replaced (a re-run of every partition)
        for p in range(partitions):
            part = Partition("2026-11-20", f"writer{worker}@1.0.{p}")
            for _ in range(20):
                try:
                    with connect(db) as con:
                        replace_partition(con, "test_results", part, rows_for(part.eval_date, part.skill_version,
                                                                               rows, attempt))
                    break
                except Exception:  # noqa: BLE001 - counted; the write is retried
                    conflicts += 1
    out.put(conflicts)


def run(db: str, processes: int = 4, partitions: int = 50, rows: int = 1000) -> WriterFigures:
    """Write with ``processes`` processes at once, then read every partition back."""
    from eval_pipelines.store.connection import connect

    with connect(db):  # schema created before the race starts
        pass
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    started = time.perf_counter()
    procs = [ctx.Process(target=_writer, args=(db, w, partitions, rows, queue)) for w in range(processes)]
    for proc in procs:
        proc.start()
    conflicts = sum(queue.get(timeout=1800) for _ in procs)
    for proc in procs:
        proc.join(timeout=60)
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    with connect(db) as con:
        frame = con.execute("SELECT skill_version, test_id, run_id FROM test_results").df()
    read_s = time.perf_counter() - started
    duplicated = int(frame.duplicated(["skill_version", "test_id"]).sum())
    stale = int((frame["run_id"] != "run-2").sum())
    return WriterFigures(store="postgres" if db.startswith("postgres") else "duckdb", write_s=write_s,
                         read_s=read_s, conflicts=conflicts, expected_rows=processes * partitions * rows,
                         rows_read=len(frame), duplicated=duplicated + stale)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=50)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--postgres", action="store_true", help="also on a throwaway local PostgreSQL server")
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory() as scratch:
        figures.append(run(str(Path(scratch) / "bench.duckdb"), args.processes, args.partitions, args.rows))
    if args.postgres:
        from tests.support.postgres import LocalPostgres

        with LocalPostgres(db_name="bench") as pg:
            figures.append(run(pg.url, args.processes, args.partitions, args.rows))
    print(f"{args.processes} processes x {args.partitions} partitions x {args.rows} rows, written then replaced\n")
    print("| store | write time | read back | conflicts (retried) | rows lost | rows duplicated |")
    print("|---|---|---|---|---|---|")
    for f in figures:
        print(f"| {f.store} | {f.write_s:.1f} s | {f.read_s:.2f} s | {f.conflicts} | {f.lost} | {f.duplicated} |")


if __name__ == "__main__":
    main()
