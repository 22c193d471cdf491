"""Runs are partitioned by evaluation date x skill version.

The date dimension keeps history: a nightly re-run of the same version writes a
new partition instead of overwriting yesterday's rows, so drift can be charted.
Skill versions are dynamic: the sensor (or the demo) adds them as they appear.
"""

from __future__ import annotations

from datetime import date

import dagster as dg

from eval_pipelines.spec.package import partition_key_problem
from eval_pipelines.store.partition import Partition

skill_versions = dg.DynamicPartitionsDefinition(name="skill_versions")
eval_dates = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_offset=1, timezone="UTC")
eval_partitions = dg.MultiPartitionsDefinition({"date": eval_dates, "skill_version": skill_versions})


def partition_key_for(skill_version: str, on: date) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"date": on.isoformat(), "skill_version": skill_version})


def partition_of(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> Partition:
    dims = eval_partitions.get_partition_key_from_str(str(context.partition_key)).keys_by_dimension
    # Dagster accepts any dynamic key (the sensor and the demo only add valid
    # ones); a key added by hand with a newline or `|` fails here, readably.
    problem = partition_key_problem(dims["skill_version"])
    if problem:
        raise dg.Failure(description=f"partition {dims['skill_version']!r} is not a skill version: {problem}",
                         allow_retries=False)
    return Partition(eval_date=dims["date"], skill_version=dims["skill_version"])
