"""A backfill on one DuckDB file: two workers run partitions at once with the
multiprocess executor (the run's one step in its own process).

Four partitions: each step process starts a fresh Python that imports Dagster
(about 2-3 s of CPU). Nothing but the store's own lock back-off keeps the
writers apart (no Dagster pool), which is what this test exercises."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.store.connection import connect

pytestmark = pytest.mark.slow
PROJECT = Path(__file__).resolve().parents[2]


# Each run is one step now (one process start instead of thirteen), but on a busy
# 2-core machine four Dagster runs in fresh processes still take minutes: the
# test gets the time it needs rather than the suite-wide 300 s.
@pytest.mark.timeout(1200)
def test_backfill_with_the_multiprocess_executor(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(PROJECT / "skills" / "calculator" / "v1.0.0", root / "skills" / "calculator")
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    db = tmp_path / "results.duckdb"
    env = {k: v for k, v in os.environ.items()
           if k == "EVAL_PIPELINES_START_DATE" or not k.startswith(("EVAL_PIPELINES_", "OPENAI_"))}
    env |= {"DAGSTER_HOME": str(home), "EVAL_PIPELINES_HOME": str(root), "EVAL_PIPELINES_DB": str(db),
            "PYTHONPATH": str(PROJECT)}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(skill_versions.name, ["calculator@1.0.0"])
    days = [f"2026-11-{d:02d}" for d in range(1, 5)]
    workers = [subprocess.Popen([sys.executable, "-m", "tests.support.backfill_job", *days[i::2]],
                                cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for i in range(2)]
    outcomes = []
    for worker in workers:
        out, err = worker.communicate(timeout=1100)
        assert worker.returncode == 0, err[-3000:]
        outcomes += json.loads(out.strip().splitlines()[-1])
    assert sorted(o["day"] for o in outcomes) == days
    assert all(o["success"] for o in outcomes), [o for o in outcomes if not o["success"]]
    with connect(db) as con:
        per_day = con.execute("SELECT eval_date, count(*) FROM test_results GROUP BY 1 ORDER BY 1").fetchall()
        duplicates = con.execute("SELECT count(*) FROM (SELECT eval_date, test_id, count(*) AS n "
                                 "FROM model_outputs GROUP BY 1, 2 HAVING n > 1)").fetchone()[0]
        nights = con.execute("SELECT count(DISTINCT eval_date) FROM regressions "
                             "WHERE comparison = 'previous_night'").fetchone()[0]
    assert per_day == [(d, 6) for d in days]
    assert duplicates == 0
    assert nights >= 1  # later nights found earlier ones as their drift baseline
