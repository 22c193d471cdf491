"""Concurrent runs (issue #9): three Dagster runs of different partitions at once,
each in its own process on one instance (no Dagster pool: writers meet at the
DuckDB lock itself), plus a reader running SQL on the same DuckDB file the whole time.

DuckDB admits one read-write process per file and no reader from another
process while it is open, so the reader uses ``connect(read_only=True,
wait_s=...)``: it either reads, or gets ``DatabaseBusy`` (a clear "retry later")
after its bound. Every read it completes must be consistent: each partition's
``test_results`` hold either none or all of the partition's rows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from eval_pipelines.store.connection import DatabaseBusy, connect

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]
PROJECT = Path(__file__).resolve().parents[2]
DAY = "2026-11-20"
SKILLS = {"calculator@1.0.0": "calculator/v1.0.0", "calculator@1.1.0": "calculator/v1.1.0",
          "string-reverse@1.0.0": "string-reverse"}


def test_three_runs_and_a_reader_on_one_duckdb_file(tmp_path: Path) -> None:
    root = tmp_path / "project"
    for rel in SKILLS.values():
        shutil.copytree(PROJECT / "skills" / rel, root / "skills" / rel.replace("/", "-"))
    shutil.copytree(PROJECT / "datasets", root / "datasets")
    home = tmp_path / "dagster_home"
    home.mkdir()
    # As shipped: no pool, the store's own lock back-off keeps the writers apart.
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    db = tmp_path / "results.duckdb"
    with connect(db):
        pass  # the file and its schema exist before anyone reads
    env = {k: v for k, v in os.environ.items()
           if k == "EVAL_PIPELINES_START_DATE" or not k.startswith(("EVAL_PIPELINES_", "OPENAI_", "DAGSTER_"))}
    env |= {"DAGSTER_HOME": str(home), "EVAL_PIPELINES_HOME": str(root), "EVAL_PIPELINES_DB": str(db),
            "PYTHONPATH": str(PROJECT)}
    # Register the partitions first (three processes adding them at once would race on the instance).
    import dagster as dg

    from eval_pipelines.defs.partitions import skill_versions

    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(skill_versions.name, list(SKILLS))

    started = time.perf_counter()
    runs = {key: subprocess.Popen([sys.executable, "-m", "tests.support.run_partition", key, DAY], cwd=PROJECT,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for key in SKILLS}
    outcomes: Counter[str] = Counter()
    snapshots: list[dict[str, int]] = []
    while any(p.poll() is None for p in runs.values()):
        try:
            with connect(db, read_only=True, wait_s=0.3) as con:
                snapshot = dict(con.execute("SELECT skill_version, count(*) FROM test_results GROUP BY 1")
                                .fetchall())
                con.execute("SELECT count(*) FROM model_outputs JOIN test_cases "
                            "USING (eval_date, skill_version, test_id)").fetchone()
            snapshots.append(snapshot)
            outcomes["read"] += 1
        except DatabaseBusy:
            outcomes["busy"] += 1  # the clear answer: retry later
        time.sleep(0.3)
    elapsed = time.perf_counter() - started
    results = {}
    for key, proc in runs.items():
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, f"{key}: {out[-2000:]}\n{err[-3000:]}"
        results[key] = json.loads(out.strip().splitlines()[-1])
    assert all(r["success"] for r in results.values()), results

    with connect(db, read_only=True) as con:
        final = dict(con.execute("SELECT skill_version, count(*) FROM test_results GROUP BY 1").fetchall())
        expected = dict(con.execute("SELECT skill_version, n_tests * trials FROM suites").fetchall())
        dupes = con.execute("SELECT count(*) FROM (SELECT eval_date, skill_version, test_id, target, trial "
                            "FROM model_outputs GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
        run_ids = dict(con.execute("SELECT skill_version, count(DISTINCT run_id) FROM test_results "
                                   "GROUP BY 1").fetchall())
    assert final == expected and set(final) == set(SKILLS)
    assert dupes == 0 and set(run_ids.values()) == {1}
    assert outcomes["read"] >= 1
    for snapshot in snapshots:  # never a partition half there
        for key, rows in snapshot.items():
            assert rows == final[key], (key, rows, snapshot)
    print(f"\nFIGURES concurrent runs: partitions={len(SKILLS)} rows={sum(final.values())} "
          f"({final}) reader reads={outcomes['read']} busy={outcomes['busy']} inconsistent=0 "
          f"seconds={elapsed:.1f}")
