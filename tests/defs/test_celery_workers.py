"""Runs on Celery workers, results in the shared PostgreSQL store, a worker killed mid-run.

Every service is started here (tests/support/worker_cluster.py): a throwaway
PostgreSQL (Dagster's instance and the results store) and Redis on free ports of
127.0.0.1, 3 Celery workers (one run each at a time) and a Dagster daemon, with
deploy/dagster.workers.yaml as the instance. A backfill of bundled skill versions
is launched as the UI launches one (GraphQL ``launchPartitionBackfill``); the daemon
turns it into runs, queues them and hands them to the workers.

One backfill, one worker's process group SIGKILLed while it runs a partition:
- run monitoring fails that run after ``max_runtime_seconds`` and run retries start
  it again on a live worker;
- every partition (those left alone and the killed one) ends with exactly one
  successful run and one copy of its rows in the shared store.

Skipped, with the reason, when PostgreSQL, redis-server, dagster-celery or psycopg
is missing (.ci/run installs them). Waits poll with generous, finite deadlines.
"""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from tests.support.worker_cluster import WorkerCluster, why_unavailable

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

# Three versions on three workers: enough for runs in flight at once and a worker to kill mid-run,
# few enough to keep the test suite's time (the backfill daemon submits about one run per 13 s here).
SKILLS = {"calculator/v1.0.0": "calculator@1.0.0", "calculator/v1.1.0": "calculator@1.1.0",
          "string-reverse/1.0.0": "string-reverse@1.0.0"}
BACKFILL_S = 600  # a loaded 2-core machine: 3 runs on 3 workers take 1-2 minutes
MAX_RUNTIME_S = 90  # above a healthy run here (10-60 s); the killed run is failed after it

LAUNCH = """
mutation($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message stack }
    ... on PartitionKeysNotFoundError { message }
  }
}
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[WorkerCluster]:
    reason = why_unavailable()
    if reason:
        pytest.skip(reason)
    with WorkerCluster(list(SKILLS), workers=3, max_runtime_s=MAX_RUNTIME_S) as running:
        running.stop_triggers()
        running.start_daemon()
        yield running


def _launch_backfill(cluster: WorkerCluster, day: str) -> str:
    import os

    import dagster as dg
    from dagster_graphql.test.utils import execute_dagster_graphql

    from eval_pipelines.pipeline.stages import STAGES

    instance = dg.DagsterInstance.get()
    instance.add_dynamic_partitions("skill_versions", list(SKILLS.values()))
    cwd = os.getcwd()
    os.chdir(cluster.root)
    try:
        with cluster.workspace() as wpc:
            result = execute_dagster_graphql(wpc.create_request_context(), LAUNCH, variables={"backfillParams": {
                "assetSelection": [{"path": [stage.name]} for stage in STAGES],
                "partitionNames": [f"{day}|{key}" for key in SKILLS.values()]}})
    finally:
        os.chdir(cwd)
    answer = result.data["launchPartitionBackfill"]
    assert answer["__typename"] == "LaunchBackfillSuccess", answer
    return answer["backfillId"]


def _runs(day: str) -> list:
    import dagster as dg

    instance = dg.DagsterInstance.get()
    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/partition/date": day}))
    return runs


def _settled(day: str) -> bool:
    """Every partition has a successful run and no run of the day is still going."""
    import dagster as dg

    runs = _runs(day)
    done = {r.tags.get("dagster/partition/skill_version") for r in runs if r.status == dg.DagsterRunStatus.SUCCESS}
    going = [r for r in runs if not r.is_finished]
    return done >= set(SKILLS.values()) and not going


def _wait(cluster: WorkerCluster, check, timeout_s: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(2)
    pytest.fail(f"{what} within {timeout_s} s\n{cluster.logs()}")


def _stored(cluster: WorkerCluster, day: str) -> dict[str, tuple[int, int, int]]:
    """skill_version -> (result rows, distinct result keys, distinct run ids) in the shared store."""
    from eval_pipelines.store.connection import connect

    with connect(cluster.results_db) as con:
        rows = con.execute(
            "SELECT skill_version, count(*), count(DISTINCT test_id || '|' || target || '|' || trial), "
            "count(DISTINCT run_id) FROM test_results WHERE eval_date = ? GROUP BY skill_version", [day]).fetchall()
    return {key: (n, distinct, run_ids) for key, n, distinct, run_ids in rows}


def _successes(day: str) -> dict[str, int]:
    import dagster as dg

    counts: dict[str, int] = {}
    for run in _runs(day):
        if run.status == dg.DagsterRunStatus.SUCCESS:
            key = run.tags["dagster/partition/skill_version"]
            counts[key] = counts.get(key, 0) + 1
    return counts


def test_backfill_on_workers_with_one_killed_mid_run_stores_every_partition_once(cluster: WorkerCluster) -> None:
    """One backfill covers both promises (a second, undisturbed backfill cost two more minutes of
    the suite and proved nothing more): the partitions whose worker was left alone end with one
    successful run and one copy of their rows, and so does the one whose worker was killed."""
    import dagster as dg
    from celery import Celery

    day = "2026-11-20"
    _launch_backfill(cluster, day)
    app = Celery(broker=cluster.env["EVAL_PIPELINES_BROKER"], backend=cluster.env["EVAL_PIPELINES_BACKEND"])
    victim: list = []

    def a_worker_runs_a_partition() -> bool:  # the worker whose task is STARTED
        for run in _runs(day):
            task_id = run.tags.get("dagster-celery/task_id")
            if run.status != dg.DagsterRunStatus.STARTED or not task_id:
                continue
            result = app.AsyncResult(task_id)
            if result.state == "STARTED" and isinstance(result.info, dict):
                name = str(result.info.get("hostname", ""))
                for i, proc in enumerate(cluster.workers):
                    if name.startswith(f"w{i}@") and proc.poll() is None:
                        victim.append((proc, run.run_id))
                        return True
        return False

    _wait(cluster, a_worker_runs_a_partition, BACKFILL_S, "no run started on a worker")
    proc, killed_run = victim[0]
    cluster.kill_worker(proc)
    # monitoring fails the killed run after max_runtime_seconds; a retry completes the partition
    _wait(cluster, lambda: _settled(day), BACKFILL_S + MAX_RUNTIME_S, "the partitions did not all complete")
    instance = dg.DagsterInstance.get()
    assert instance.get_run_by_id(killed_run).status == dg.DagsterRunStatus.FAILURE
    assert _successes(day) == {key: 1 for key in SKILLS.values()}
    stored = _stored(cluster, day)
    assert set(stored) == set(SKILLS.values())
    for key, (rows, distinct, run_ids) in stored.items():
        assert rows == distinct > 0 and run_ids == 1, (key, rows, distinct, run_ids)
