"""``eval-pipelines demo``: register the bundled skills and evaluate each through Dagster (the job the sensor and the schedule launch)."""

from __future__ import annotations

import argparse
import os
from datetime import datetime, timezone
from pathlib import Path

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.cli.options import EXIT_FAILED, EXIT_INVALID, EXIT_OK, epilog, project_paths
from eval_pipelines.cli.summary import print_summary


def cmd_demo(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    db_arg = str(Path(args.db).resolve()) if args.db and not args.db.startswith("md:") else args.db
    # Dagster reads dagster.yaml from DAGSTER_HOME: the project folder holds it.
    os.environ.setdefault("DAGSTER_HOME", str(root))
    os.chdir(root)
    import dagster as dg

    from eval_pipelines.defs.partitions import partition_key_for, skill_versions
    from eval_pipelines.definitions import build_definitions, default_db_path
    from eval_pipelines.pipeline.project import discover_skill_versions
    from eval_pipelines.suite.package import partition_key_problem

    db_path = db_arg or default_db_path(str(root))
    paths = project_paths(root, db_path)
    found, problems = discover_skill_versions(paths)
    for problem in problems.values():
        print(f"skipped: {problem}")
    keys = [k for k in sorted(found) if not partition_key_problem(k)]
    if not keys:
        print(f"no skill versions found in {paths.skills_dir}")
        return EXIT_INVALID
    instance = dg.DagsterInstance.get()
    registered = set(instance.get_dynamic_partitions(skill_versions.name))
    instance.add_dynamic_partitions(skill_versions.name, [k for k in keys if k not in registered])
    job = build_definitions(str(root), db_path).resolve_job_def("evaluate_skill_version")
    today = datetime.now(timezone.utc).date()
    failed = []
    for key in keys:
        print(f"evaluating {key} ...", flush=True)
        result = job.execute_in_process(
            partition_key=partition_key_for(key, today),
            instance=instance,
            raise_on_error=False,
            tags={"eval/trigger": "demo", "eval/skill_version": key},
            # Step-by-step lines and failures stay in the run's event log (the UI shows them); a
            # failure is printed below in one line, without the console logger's stack trace.
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
        )
        for evaluation in result.get_asset_check_evaluations():
            if (evaluation.description or "").startswith("skipped:"):  # nothing to check (a warning)
                print(f"  check {evaluation.check_name} {evaluation.description}")
            elif not evaluation.passed:
                print(f"  check {evaluation.check_name} failed: {evaluation.description or ''}".rstrip())
        # A run whose evaluation failed a check fails on purpose (red in the Runs list);
        # only a run that failed for another reason is a failure of the demo.
        verdict = instance.get_run_by_id(result.run_id).tags.get("eval/verdict")
        if not result.success and verdict in ("gate_failed", "regressed"):
            print(f"  evaluation verdict: {verdict.replace('_', ' ')} (the run is marked failed)")
        elif not result.success:
            failed.append(key)
            for event in result.all_events:
                if event.is_step_failure and event.step_failure_data:
                    print(f"  {event.step_key} failed: {event.step_failure_data.error.message.strip()}")
    print_summary(db_path, keys, today.isoformat())
    print(f"Dagster runs: DAGSTER_HOME={os.environ['DAGSTER_HOME']} "
          f"(open the UI with `make ui`)")
    if failed:
        print(f"runs failed for: {', '.join(failed)}")
        return EXIT_FAILED
    return EXIT_OK


def add_demo_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("demo", parents=[common], help="register the bundled skills and evaluate each through Dagster",
                       epilog=epilog([("eval-pipelines demo", "what `make demo` runs: every bundled skill version, "
                                                              "no network"),
                                      ("eval-pipelines demo --db .data/demo.duckdb", "into another DuckDB file")],
                                     (ExitCode.OK, ExitCode.GATE_FAILED, ExitCode.INVALID_INPUT,
                                      ExitCode.DATABASE_BUSY)),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.set_defaults(func=cmd_demo)
