"""Run the evaluation job for one partition in this process, on DAGSTER_HOME's instance.

    python -m tests.support.run_partition <skill_version> <date>

The project and database come from EVAL_PIPELINES_HOME and EVAL_PIPELINES_DB.
Used by the reliability tests that need a run in its own process (to SIGKILL
it, or to run three at once). Prints one JSON line: success, run id, failures.
"""

from __future__ import annotations

import json
import os
import sys

import dagster as dg


def main(skill_version: str, day: str) -> int:
    from eval_pipelines.definitions import build_definitions
    from eval_pipelines.defs.partitions import skill_versions

    with dg.DagsterInstance.get() as instance:
        if skill_version not in instance.get_dynamic_partitions(skill_versions.name):
            instance.add_dynamic_partitions(skill_versions.name, [skill_version])
        job = build_definitions(os.environ["EVAL_PIPELINES_HOME"],
                                os.environ["EVAL_PIPELINES_DB"]).resolve_job_def("evaluate_skill_version")
        print("started", flush=True)
        result = job.execute_in_process(
            partition_key=dg.MultiPartitionKey({"date": day, "skill_version": skill_version}),
            instance=instance, raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
        failures = [e.message for e in result.all_events if e.is_step_failure]
        print(json.dumps({"skill_version": skill_version, "day": day, "success": result.success,
                          "run_id": result.run_id, "failures": failures}), flush=True)
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
