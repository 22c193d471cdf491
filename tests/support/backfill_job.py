"""A multiprocess variant of the evaluation job, importable by step subprocesses.

`dg.reconstructable` needs a module-level function: each step process imports
this module and rebuilds the job from the project named in EVAL_PIPELINES_HOME.
"""

from __future__ import annotations

import os

import dagster as dg

from eval_pipelines.defs.assets import GROUP
from eval_pipelines.definitions import build_definitions


def multiprocess_job() -> dg.JobDefinition:
    root = os.environ["EVAL_PIPELINES_HOME"]
    job = dg.define_asset_job(
        "evaluate_skill_version_multiprocess",
        selection=dg.AssetSelection.groups(GROUP),
        executor_def=dg.multiprocess_executor.configured({"max_concurrent": 2}),
    )
    defs = build_definitions(root, os.environ["EVAL_PIPELINES_DB"])
    return dg.Definitions(assets=defs.assets, jobs=[job],
                          resources=defs.resources).resolve_job_def(job.name)


def main(days: list[str]) -> int:
    """Run the multiprocess job for each date, one after another, on DAGSTER_HOME's instance."""
    import json
    from datetime import date

    from eval_pipelines.defs.partitions import partition_key_for

    results = []
    with dg.DagsterInstance.get() as instance:
        job = dg.reconstructable(multiprocess_job)
        for day in days:
            key = partition_key_for("calculator@1.0.0", date.fromisoformat(day))
            tags = {"dagster/partition": str(key),
                    **{f"dagster/partition/{k}": v for k, v in key.keys_by_dimension.items()}}
            with dg.execute_job(job, instance=instance, tags=tags) as result:
                failures = [e.message for e in result.all_events if e.is_step_failure]
                results.append({"day": day, "success": result.success, "failures": failures})
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
