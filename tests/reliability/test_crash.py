"""Crash consistency (issue #9): runs SIGKILLed in the model phase and in the
middle of a DuckDB write, then re-run.

* model phase: a Dagster run (its own process, ``tests/support/run_partition``)
  of 40 OpenAI cases is killed after 15 requests; the partition's
  ``model_outputs`` stay empty, the finished calls are in the response cache,
  and the re-run pays only for the calls that were not stored.
* DuckDB write: a writer process is killed between its INSERT and COMMIT
  (deterministically, by pausing there), and at arbitrary moments of a large
  real insert; readers always see either the whole old partition or the whole
  new one, never a mix, and the re-run leaves no duplicates.

Figures printed with ``-s`` go into docs/reliability.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from eval_pipelines.store.connection import DatabaseBusy, connect
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
PROJECT = Path(__file__).resolve().parents[2]
DAY = "2026-11-20"


def child_env(home: Path, root: Path, db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k == "EVAL_PIPELINES_START_DATE" or not k.startswith(("EVAL_PIPELINES_", "OPENAI_", "DAGSTER_"))}
    return env | {"DAGSTER_HOME": str(home), "EVAL_PIPELINES_HOME": str(root), "EVAL_PIPELINES_DB": str(db),
                  "PYTHONPATH": str(PROJECT)}


def dagster_home(tmp_path: Path) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    # The pool setting the project ships in dagster.yaml (duckdb steps: one at a time).
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n"
                                       "concurrency:\n  pools:\n    default_limit: 1\n")
    return home


def paid_skill(root: Path, base_url: str, n: int) -> None:
    skill = root / "skills" / "paid" / "1.0.0"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: paid\ndescription: Paid calls.\nversion: 1.0.0\n---\nAnswer.\n")
    lines = ["tests:"]
    for i in range(n):
        lines += [f"  - id: c{i:02d}", f"    input: question {i}", "    assert:",
                  "      - type: contains", "        value: question"]
    (skill / "eval.yaml").write_text("\n".join(lines) + "\n")
    (skill / "targets.yaml").write_text(
        f"targets:\n  - name: m\n    type: openai\n    model: fake\n    base_url: {base_url}\n"
        "    concurrency: 2\n    api_key_env: FAKE_KEY_NOT_SET\n")


def test_dagster_run_killed_in_the_model_phase_resumes_from_the_cache(tmp_path: Path) -> None:
    n = 60
    root, db, home = tmp_path / "project", tmp_path / "results.duckdb", dagster_home(tmp_path)
    argv = [sys.executable, "-m", "tests.support.run_partition", "paid@1.0.0", DAY]
    with FakeOpenAIServer(latency_s=0.1) as server:
        paid_skill(root, server.base_url, n)
        env = child_env(home, root, db)
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while server.request_count < 30 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        paid_first = server.request_count
        assert 30 <= paid_first < n
        with connect(db, read_only=True) as con:
            stage_rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                          for t in ("suites", "test_cases", "model_outputs", "test_results")}
            cached = con.execute("SELECT count(*) FROM response_cache").fetchone()[0]
        # Stages before the model phase committed; the model phase's partition is not half there.
        assert stage_rows == {"suites": 1, "test_cases": n, "model_outputs": 0, "test_results": 0}
        assert 0 < cached <= paid_first

        server.reset_counts()
        done = subprocess.run(argv, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        assert json.loads(done.stdout.strip().splitlines()[-1])["success"]
        paid_again = server.request_count
        elapsed = time.perf_counter() - started
    assert paid_again == n - cached  # finished calls came from the cache
    with connect(db, read_only=True) as con:
        outputs = con.execute("SELECT count(*), count(DISTINCT test_id), count(*) FILTER (WHERE cached) "
                              "FROM model_outputs").fetchone()
        results = con.execute("SELECT count(*), count(DISTINCT test_id) FROM test_results").fetchone()
        runs = con.execute("SELECT count(DISTINCT run_id) FROM model_outputs").fetchone()[0]
    assert outputs == (n, n, cached)
    assert results == (n, n) and runs == 1
    print(f"\nFIGURES model-phase kill: cases={n} requests_before_kill={paid_first} cached={cached} "
          f"requests_on_rerun={paid_again} rows={outputs[0]} duplicates=0 seconds={elapsed:.1f}")


WRITER = textwrap.dedent("""
    import sys, time
    import pandas as pd
    from eval_pipelines.store.connection import Partition, connect, replace_partition

    db, rows, run_id, pause = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "pause"
    now = pd.Timestamp("2026-11-20 00:00:00")
    frame = pd.DataFrame({
        "eval_date": "2026-11-20", "skill_version": "s@1.0.0", "skill": "s", "version": "1.0.0",
        "run_id": run_id, "suite": "s", "test_id": [f"t{i:07d}" for i in range(rows)], "target": "m",
        "trial": 0, "output": "x" * 40, "cached": False, "attempts": 1, "llm_calls": 1, "tool_calls": 0,
        "trace": "[]", "created_at": now})

    class PauseBeforeCommit:
        # The real connection, except that COMMIT waits (to be killed there).
        def __init__(self, con):
            self.con = con
        def execute(self, sql, *args):
            if sql == "COMMIT" and pause:
                print("before-commit", flush=True)
                time.sleep(120)
            return self.con.execute(sql, *args)
        def __getattr__(self, name):
            return getattr(self.con, name)

    with connect(db) as con:
        print("writing", flush=True)
        replace_partition(PauseBeforeCommit(con), "model_outputs", Partition("2026-11-20", "s@1.0.0"), frame)
    print("committed", flush=True)
""")


def write(db: Path, rows: int, run_id: str, mode: str = "run") -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(rows), run_id, mode], cwd=PROJECT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(PROJECT)})


def partition_state(db: Path) -> tuple[int, list[str], int]:
    """(rows, distinct run ids, duplicate keys) of the partition, as a reader sees it."""
    with connect(db, read_only=True, wait_s=30) as con:
        rows, dupes = con.execute("SELECT count(*), count(*) - count(DISTINCT test_id) FROM model_outputs "
                                  "WHERE skill_version = 's@1.0.0'").fetchone()
        runs = [r[0] for r in con.execute("SELECT DISTINCT run_id FROM model_outputs ORDER BY 1").fetchall()]
    return rows, runs, dupes


def test_writer_killed_before_commit_leaves_the_old_partition(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    first = write(db, 1000, "old")
    assert first.wait(60) == 0, first.stderr.read()
    assert partition_state(db) == (1000, ["old"], 0)

    writer = write(db, 3000, "new", "pause")
    assert writer.stdout.readline().strip() == "writing"
    assert writer.stdout.readline().strip() == "before-commit"  # DELETE and INSERT done, not committed
    # Meanwhile a reader is told, clearly, that the file is busy.
    with pytest.raises(DatabaseBusy, match=r"is busy .* for more than 0.5 s\); retry later"):
        with connect(db, read_only=True, wait_s=0.5):
            pass
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert partition_state(db) == (1000, ["old"], 0)  # the old partition, whole

    again = write(db, 3000, "new")
    assert again.wait(60) == 0, again.stderr.read()
    assert partition_state(db) == (3000, ["new"], 0)
    print("\nFIGURES kill before COMMIT: old rows=1000 kept; re-run rows=3000 duplicates=0")


def test_writer_killed_at_arbitrary_moments_of_a_large_insert(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    started = time.perf_counter()
    first = write(db, 400_000, "old")
    assert first.stdout.readline().strip() == "writing"
    began = time.perf_counter()
    assert first.wait(120) == 0, first.stderr.read()
    write_s = time.perf_counter() - began  # how long one full replace takes here
    assert partition_state(db) == (400_000, ["old"], 0)
    seen = []
    for i, fraction in enumerate((0.1, 0.5, 0.9, 1.5)):
        run_id = f"new-{i}"
        writer = write(db, 300_000 + i, run_id)
        assert writer.stdout.readline().strip() == "writing"
        time.sleep(write_s * fraction)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        rows, runs, dupes = partition_state(db)
        seen.append((fraction, rows, runs[0]))
        assert dupes == 0 and len(runs) == 1
        # All of one write, never a mix: the previous partition or this run's.
        assert (rows, runs[0]) == (300_000 + i, run_id) or (rows, runs[0]) == previous(seen)
    final = write(db, 2000, "final")
    assert final.wait(120) == 0, final.stderr.read()
    assert partition_state(db) == (2000, ["final"], 0)
    print(f"\nFIGURES kills during a large insert (full write {write_s:.2f} s; kill at fraction, rows seen, "
          f"run): {seen}; re-run rows=2000 duplicates=0; {time.perf_counter() - started:.1f} s")


def previous(seen: list[tuple[float, int, str]]) -> tuple[int, str]:
    """What the partition held before the latest kill."""
    if len(seen) < 2:
        return 400_000, "old"
    return seen[-2][1], seen[-2][2]
