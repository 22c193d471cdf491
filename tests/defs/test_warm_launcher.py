"""The warm run launcher (defs/warm_launcher.py): runs launched through Dagster's own
launch path become forks of one warm host, store the same rows and events as a
run from the code server, and are watched and cancelled by pid."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.launcher import WorkerStatus
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.test_utils import instance_for_test
from dagster._daemon.monitoring.run_monitoring import monitor_started_run
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import ModuleTarget

from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.defs.warm_launcher import WORKER_TAG, WarmRunLauncher
from eval_pipelines.store.connection import connect

pytestmark = pytest.mark.slow
PROJECT = Path(__file__).resolve().parents[2]
LAUNCHER = {"module": "eval_pipelines.defs.warm_launcher", "class": "WarmRunLauncher"}


def _wait(instance: dg.DagsterInstance, run_id: str, timeout_s: float = 240) -> dg.DagsterRun:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.is_finished:
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish: {instance.get_run_by_id(run_id).status}")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "project"
    shutil.copytree(PROJECT / "skills" / "calculator" / "v1.0.0", root / "skills" / "calculator")
    # A second skill whose target answers slowly: its runs are still in the model phase when we act.
    sleeper = root / "skills" / "sleeper"
    shutil.copytree(PROJECT / "skills" / "calculator" / "v1.0.0", sleeper)
    (sleeper / "SKILL.md").write_text((sleeper / "SKILL.md").read_text().replace("name: calculator", "name: sleeper"))
    (sleeper / "targets.yaml").write_text(
        "targets:\n  - name: calc-script\n    type: command\n"
        "    command: [python, -c, 'import time; time.sleep(100)']\n    timeout_s: 200\n")
    for key in [k for k in os.environ if k.startswith(("EVAL_PIPELINES_", "OPENAI_"))
                and k != "EVAL_PIPELINES_START_DATE"]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("EVAL_PIPELINES_HOME", str(root))
    monkeypatch.setenv("EVAL_PIPELINES_DB", str(tmp_path / "results.duckdb"))
    monkeypatch.setenv("PYTHONPATH", str(PROJECT))
    monkeypatch.chdir(root)
    return root


def _launch(instance: dg.DagsterInstance, context, day: str, version: str) -> str:
    location = context.get_code_location("eval")
    remote_job = location.get_repository("__repository__").get_full_job("evaluate_skill_version")
    from eval_pipelines.definitions import build_definitions

    job = build_definitions().resolve_job_def("evaluate_skill_version")
    run = instance.create_run_for_job(
        job_def=job, remote_job_origin=remote_job.get_remote_origin(),
        job_code_origin=remote_job.get_python_origin(),
        tags={"dagster/partition": f"{day}|{version}", "dagster/partition/date": day,
              "dagster/partition/skill_version": version})
    instance.launch_run(run.run_id, context)
    return run.run_id


def test_runs_are_forked_from_one_warm_host_watched_and_cancelled_by_pid(project: Path, tmp_path: Path) -> None:
    with instance_for_test(overrides={"run_launcher": LAUNCHER}, temp_dir=str(tmp_path)) as instance:
        assert isinstance(instance.run_launcher, WarmRunLauncher)
        instance.add_dynamic_partitions(skill_versions.name, ["calculator@1.0.0", "sleeper@1.0.0"])
        target = ModuleTarget(module_name="eval_pipelines.definitions", attribute=None,
                              working_directory=str(PROJECT), location_name="eval")
        with WorkspaceProcessContext(instance, target) as workspace:
            context = workspace.create_request_context()
            launcher = instance.run_launcher
            runs = [_launch(instance, context, day, "calculator@1.0.0") for day in ("2026-11-01", "2026-11-02")]
            killed = _launch(instance, context, "2026-11-03", "sleeper@1.0.0")
            cancelled = _launch(instance, context, "2026-11-04", "sleeper@1.0.0")
            finished = [_wait(instance, run_id) for run_id in runs]
            assert [r.status for r in finished] == [DagsterRunStatus.SUCCESS] * 2, [
                e.message for r in runs for e in instance.all_logs(r) if e.is_failure]
            workers = [instance.get_run_by_id(r).tags[WORKER_TAG] for r in (*runs, killed, cancelled)]
            pids = [int(w.split(":")[1]) for w in workers]
            assert len(set(pids)) == 4 and len({w.split(":")[0] for w in workers}) == 1
            # Every worker came from the same host: one host process serves every launch.
            assert len(launcher._hosts) == 1  # noqa: SLF001
            assert next(iter(launcher._hosts.values())).process.pid not in pids  # noqa: SLF001
            for run_id, pid in zip(runs, pids):
                messages = [e.message for e in instance.all_logs(run_id)]
                assert any(m.endswith(f"Run worker forked from the warm run host (pid {pid}).") for m in messages)
                assert f"Started process for run (pid: {pid})." in messages
            # A finished worker is not "running" to run monitoring.
            assert launcher.check_run_worker_health(finished[0]).status == WorkerStatus.FAILED
            # The materialisations are per partition, as from the code server.
            for day in ("2026-11-01", "2026-11-02"):
                key = dg.MultiPartitionKey({"date": day, "skill_version": "calculator@1.0.0"})
                assert key in instance.get_materialized_partitions(dg.AssetKey("metrics"))

            # The slow runs: a killed worker is seen at once, a cancel interrupts the worker.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not all(
                    instance.get_run_by_id(r).status == DagsterRunStatus.STARTED for r in (killed, cancelled)):
                time.sleep(0.2)
            run = instance.get_run_by_id(killed)
            assert launcher.check_run_worker_health(run).status == WorkerStatus.RUNNING
            os.kill(pids[2], signal.SIGKILL)
            deadline = time.monotonic() + 10
            while launcher.check_run_worker_health(run).status == WorkerStatus.RUNNING:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            # The monitoring daemon's own pass fails the run now, not at the run timeout.
            record = instance.get_run_records(dg.RunsFilter(run_ids=[killed]))[0]
            monitor_started_run(instance, context, record, logging.getLogger("test"))
            assert instance.get_run_by_id(killed).status == DagsterRunStatus.FAILURE
            assert any("is gone" in (e.message or "") for e in instance.all_logs(killed))
            assert launcher.terminate(cancelled)
            assert _wait(instance, cancelled, 120).status == DagsterRunStatus.CANCELED
    with connect(os.environ["EVAL_PIPELINES_DB"], read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT eval_date) FROM test_results "
                           "WHERE skill_version = 'calculator@1.0.0'").fetchone()[0] == 2
