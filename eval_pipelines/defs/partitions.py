"""Runs are partitioned by evaluation date x skill version.

The date dimension keeps history: a nightly re-run of the same version writes a
new partition instead of overwriting yesterday's rows, so drift can be charted.
Skill versions are dynamic: the sensor (or the demo) adds them as they appear.

The date axis starts where evaluations start: the earliest evaluation date in
the store when the code location loads, else today (UTC), so a new project
shows one day, not a year of "missing" partitions. ``EVAL_PIPELINES_START_DATE``
(YYYY-MM-DD) sets it by hand, e.g. to backfill days before the first evaluation.
The start only moves earlier as evaluations are stored, so a partition key
valid once stays valid.

``EVAL_PIPELINES_HISTORY_DAYS`` (N) bounds the date axis to the last N days,
for stores with thousands of skill versions: dates x versions passes Dagster's
recommended 100,000 partitions per asset within weeks (5,000 versions x 21 days),
so keep N <= 100,000 / versions (docs/benchmarks.md, "Nightly fan-out"). Older
dates leave Dagster's partition grid, never the results store: reports and SQL
still read every night.
"""

from __future__ import annotations

import logging
import os
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import dagster as dg

from eval_pipelines.suite.package import partition_key_problem
from eval_pipelines.store.partition import Partition

START_DATE_VARIABLE = "EVAL_PIPELINES_START_DATE"
HISTORY_DAYS_VARIABLE = "EVAL_PIPELINES_HISTORY_DAYS"
# When the store exists but cannot be read in time (another process holds it for
# long), a date before any evaluation this project can have, rather than today,
# which would hide the history for this load of the code.
FALLBACK_START = "2026-01-01"


def first_evaluation_date(db_path: str | None = None, today: date | None = None) -> str:
    """Where the date axis starts: the override, else the store's first evaluation date, else
    today; never more than ``EVAL_PIPELINES_HISTORY_DAYS`` days back when that is set."""
    today = today or datetime.now(timezone.utc).date()
    start = _unbounded_start(db_path, today)
    days = os.environ.get(HISTORY_DAYS_VARIABLE, "").strip()
    if days:
        earliest = (today - timedelta(days=max(1, int(days)) - 1)).isoformat()
        return max(start, earliest)
    return start


def _unbounded_start(db_path: str | None, today: date) -> str:
    override = os.environ.get(START_DATE_VARIABLE)
    if override:
        return date.fromisoformat(override.strip()).isoformat()
    if db_path is None:
        root = os.environ.get("EVAL_PIPELINES_HOME", os.getcwd())
        db_path = os.environ.get("EVAL_PIPELINES_DB", str(Path(root).resolve() / ".data" / "eval_pipelines.duckdb"))
    from eval_pipelines.store.postgres import is_postgres

    if not is_postgres(db_path) and (db_path.startswith("md:") or not Path(db_path).is_file()):
        return today.isoformat()
    from eval_pipelines.store.connection import connect

    try:
        with connect(db_path, read_only=True, wait_s=20) as con:
            first = con.execute("SELECT min(eval_date) FROM suites").fetchone()[0]
    except Exception as exc:  # noqa: BLE001 - the code location must load whatever the store's state
        logging.getLogger(__name__).warning(f"partitions start at {FALLBACK_START}: could not read {db_path}: {exc}")
        return FALLBACK_START
    return min(first, today.isoformat()) if first else today.isoformat()


skill_versions = dg.DynamicPartitionsDefinition(name="skill_versions")
eval_dates = dg.DailyPartitionsDefinition(start_date=first_evaluation_date(), end_offset=1, timezone="UTC")
eval_partitions = dg.MultiPartitionsDefinition({"date": eval_dates, "skill_version": skill_versions})


def partition_key_for(skill_version: str, on: date) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"date": on.isoformat(), "skill_version": skill_version})


def partition_from_key(partition_key: str) -> Partition:
    """The store's partition for one of Dagster's ``date|skill_version`` keys."""
    dims = eval_partitions.get_partition_key_from_str(partition_key).keys_by_dimension
    # Dagster accepts any dynamic key (the sensor and the demo only add valid
    # ones); a key added by hand with a newline or `|` fails here, readably.
    problem = partition_key_problem(dims["skill_version"])
    if problem:
        raise dg.Failure(description=f"partition {dims['skill_version']!r} is not a skill version: {problem}",
                         allow_retries=False)
    return Partition(eval_date=dims["date"], skill_version=dims["skill_version"])
