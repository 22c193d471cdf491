"""The team deployment: ``deploy/dagster.team.yaml`` with the instance stored in PostgreSQL.

The fast tests validate the shipped file against Dagster's instance schema and
its limits. The slow test starts a throwaway PostgreSQL server
(``tests/support/postgres.py``: Debian's ``postgresql`` binaries, a cluster in a
temporary folder, a free port on 127.0.0.1), uses the shipped file unchanged
as ``$DAGSTER_HOME/dagster.yaml`` with the connection given through the
``DAGSTER_PG_*`` variables, materialises one partition of the calculator skill
with the job ``evaluate_skill_version`` and reads the run, its
materialisations and the skill-version partition back from
PostgreSQL, while the evaluation rows themselves are in DuckDB.

Skipped, with the reason, when the PostgreSQL binaries or ``dagster-postgres``
are missing (CI installs both: see docs/deploy.md).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Iterator

import dagster as dg
import pytest
import yaml

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.store.connection import connect
from tests.support.postgres import LocalPostgres, why_unavailable

PROJECT = Path(__file__).resolve().parents[2]
TEAM_YAML = PROJECT / "deploy" / "dagster.team.yaml"
JOB = "evaluate_skill_version"
CALC = "calculator@1.0.0"
DAY = "2026-11-20"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
PG_VARS = ("DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_DB", "DAGSTER_PG_USERNAME",
           "DAGSTER_PG_PASSWORD")
ASSET_NAMES = {"eval_suite", "test_cases", "model_outputs", "grades", "test_results", "metrics"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME",
                 "OPENAI_BASE_URL", *PG_VARS):
        monkeypatch.delenv(name, raising=False)


def team_home(home: Path) -> Path:
    """A DAGSTER_HOME holding the shipped team file, unchanged, as its dagster.yaml."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(TEAM_YAML, home / "dagster.yaml")
    return home


# ---- the shipped file (fast) -----------------------------------------------------


def test_team_yaml_keeps_no_secret_and_reads_the_connection_from_env() -> None:
    config = yaml.safe_load(TEAM_YAML.read_text())
    db = config["storage"]["postgres"]["postgres_db"]
    fields = ("hostname", "port", "db_name", "username", "password")
    assert {name: db[name] for name in fields} == {name: {"env": var} for name, var in zip(fields, PG_VARS)}
    assert db["scheme"] == "postgresql+psycopg2"  # the driver dagster-postgres installs
    assert "postgres_url" not in config["storage"]["postgres"]
    assert config["telemetry"] == {"enabled": False}
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert config["run_launcher"]["class"] == "DefaultRunLauncher"


def test_team_yaml_is_a_valid_instance_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster._core.instance.config import ConcurrencyConfig, dagster_instance_config
    from dagster._core.run_coordinator.queued_run_coordinator import RunQueueConfig

    for name in PG_VARS:
        monkeypatch.setenv(name, "5432" if name.endswith("PORT") else "x")
    config, _ = dagster_instance_config(str(team_home(tmp_path)))
    limits = ConcurrencyConfig.from_concurrency_settings(config["concurrency"], RunQueueConfig(
        max_concurrent_runs=10, tag_concurrency_limits=[]))
    assert limits.run_queue_config.max_concurrent_runs == 4
    tags = {limit["key"]: limit for limit in limits.run_queue_config.tag_concurrency_limits}
    assert tags["eval/skill_version"] == {"key": "eval/skill_version", "limit": 1,
                                          "value": {"applyLimitPerUniqueValue": True}}
    assert tags["eval/trigger"]["value"] == "nightly_regression"


# ---- a real PostgreSQL server (slow) ----------------------------------------------


@pytest.fixture(scope="module")
def postgres() -> Iterator[LocalPostgres]:
    reason = why_unavailable()
    if reason:
        pytest.skip(reason)
    if importlib.util.find_spec("dagster_postgres") is None:
        pytest.skip("dagster-postgres is not installed (pip install dagster-postgres; "
                    "listed in the dev extra)")
    with LocalPostgres(db_name="eval_dagster") as server:
        yield server


@pytest.fixture
def team_instance(postgres: LocalPostgres, tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[dg.DagsterInstance]:
    for name, value in postgres.env().items():
        monkeypatch.setenv(name, value)
    home = team_home(tmp_path / "dagster_home")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        yield instance
    finally:
        instance.dispose()


def make_project(root: Path) -> Path:
    shutil.copytree(PROJECT / "skills" / "calculator" / "v1.0.0", root / "skills" / "calculator" / "v1.0.0")
    shutil.copytree(PROJECT / "datasets", root / "datasets")
    shutil.copy(PROJECT / "targets.yaml", root / "targets.yaml")
    return root


@pytest.mark.slow
def test_partition_materialises_with_the_instance_in_postgres(
        postgres: LocalPostgres, team_instance: dg.DagsterInstance, tmp_path: Path) -> None:
    instance = team_instance
    # The shipped file, loaded for real: Postgres storage, queued runs, the limits.
    from dagster._core.run_coordinator.queued_run_coordinator import QueuedRunCoordinator
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
    assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 4

    root = make_project(tmp_path / "project")
    db = root / "results.duckdb"
    instance.add_dynamic_partitions(skill_versions.name, [CALC])
    partition = dg.MultiPartitionKey({"date": DAY, "skill_version": CALC})
    job = build_definitions(str(root), str(db)).resolve_job_def(JOB)
    result = job.execute_in_process(instance=instance, partition_key=partition, run_config=QUIET,
                                    raise_on_error=False)
    failures = {e.step_key: e.step_failure_data.error.message for e in result.get_step_failure_events()}
    assert result.success, failures
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    # The calculator declares no thresholds: suite_thresholds_met is skipped (not evaluated).
    assert {"every_case_has_an_output"} <= set(checks) and "suite_thresholds_met" not in checks
    assert all(checks.values()), checks

    # The run, read straight from PostgreSQL's tables ...
    runs = postgres.query("SELECT run_id, pipeline_name, status, partition FROM runs")
    assert runs == [(result.run_id, JOB, "SUCCESS", str(partition))]
    materialised = postgres.query(
        "SELECT asset_key, partition FROM event_logs "
        "WHERE run_id = %s AND dagster_event_type = 'ASSET_MATERIALIZATION'", (result.run_id,))
    stored = {(dg.AssetKey.from_db_string(key).to_user_string(), part) for key, part in materialised}
    assert stored == {(e.asset_key.to_user_string(), e.partition)
                      for e in result.get_asset_materialization_events()}
    assert {(name, str(partition)) for name in ASSET_NAMES} <= stored  # other stages may be added
    assert postgres.query("SELECT partition FROM dynamic_partitions WHERE partitions_def_name = %s",
                          (skill_versions.name,)) == [(CALC,)]
    # ... and through the instance API, as the webserver and the daemon see it.
    record = instance.get_run_record_by_id(result.run_id)
    assert record is not None and record.dagster_run.status == dg.DagsterRunStatus.SUCCESS
    event = instance.get_latest_materialization_event(dg.AssetKey("metrics"))
    assert event is not None and event.run_id == result.run_id
    assert instance.get_materialized_partitions(dg.AssetKey("metrics")) == {str(partition)}

    # Check results too: the run's checks are stored per partition in Postgres.
    assert {c.check_name for c in result.get_asset_check_evaluations()} >= {"every_case_has_an_output"}

    # The evaluation results are not in Postgres: they are DuckDB rows.
    tables = {name for (name,) in postgres.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")}
    assert "runs" in tables and "test_results" not in tables
    with connect(db, read_only=True) as con:
        assert con.execute("SELECT count(*), min(run_id), max(run_id) FROM test_results "
                           "WHERE skill_version = ? AND eval_date = ?", [CALC, DAY]).fetchone() == (
            6, result.run_id, result.run_id)
