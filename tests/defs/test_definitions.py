"""The Dagster code location loads: job, assets, checks, sensor, schedule, resources."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess

PROJECT = Path(__file__).resolve().parents[2]
STAGES = ["eval_suite", "eval_datasets", "test_cases", "model_outputs", "grades", "test_results", "metrics",
          "regression_report", "trigger_results", "blind_comparisons", "eval_report"]


@pytest.fixture
def defs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dg.Definitions:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    return build_definitions(str(tmp_path), str(tmp_path / "results.duckdb"))


def test_job_assets_and_checks_resolve(defs: dg.Definitions) -> None:
    job = defs.resolve_job_def("evaluate_skill_version")
    assert job.executor_def.name == "in_process"
    assert isinstance(job.partitions_def, dg.MultiPartitionsDefinition)
    assert {d.name for d in job.partitions_def.partitions_defs} == {"date", "skill_version"}

    graph = defs.resolve_asset_graph()
    assert sorted(k.to_user_string() for k in graph.get_all_asset_keys()) == sorted(STAGES)
    assert graph.asset_check_keys == {
        dg.AssetCheckKey(dg.AssetKey("model_outputs"), "every_case_has_an_output"),
        dg.AssetCheckKey(dg.AssetKey("metrics"), "suite_thresholds_met"),
        dg.AssetCheckKey(dg.AssetKey("metrics"), "blocking_gates"),
        dg.AssetCheckKey(dg.AssetKey("metrics"), "skill_helps"),
        dg.AssetCheckKey(dg.AssetKey("regression_report"), "no_significant_regression"),
        dg.AssetCheckKey(dg.AssetKey("regression_report"), "no_hidden_breakage"),
        dg.AssetCheckKey(dg.AssetKey("trigger_results"), "skill_triggers"),
    }
    # The stages form one chain, each partitioned by date x skill version.
    specs = {s.key.to_user_string(): s for s in defs.resolve_all_asset_specs()}
    for upstream, downstream in zip(STAGES, STAGES[1:]):
        deps = [d.asset_key.to_user_string() for d in specs[downstream].deps]
        assert deps == [upstream]
    assert not list(specs["eval_suite"].deps)
    assert all(s.partitions_def == job.partitions_def for s in specs.values())
    # The job selects every stage (the checks come with their assets; a run executes them).
    assert sorted(k.to_user_string() for k in job.asset_layer.selected_asset_keys) == sorted(STAGES)


def test_triggers_target_the_job(defs: dg.Definitions) -> None:
    sensor = defs.resolve_sensor_def("new_skill_versions")
    schedule = defs.resolve_schedule_def("nightly_regression")
    assert sensor.job_name == "evaluate_skill_version"
    assert schedule.job_name == "evaluate_skill_version"
    assert schedule.execution_timezone == "UTC"
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    # Off until someone turns it on: opening the UI does not commit anyone to paying for nightly runs.
    assert schedule.default_status == dg.DefaultScheduleStatus.STOPPED


def test_resources_point_at_the_given_root_and_database(defs: dg.Definitions, tmp_path: Path) -> None:
    resources = defs.resources or {}
    assert isinstance(resources["project"], EvalProject)
    assert isinstance(resources["store"], EvalStore)
    assert isinstance(resources["models"], ModelAccess)
    assert resources["store"].db_path == str(tmp_path / "results.duckdb")
    paths = resources["project"].paths(resources["store"].db_path)
    assert paths.skills_dir == tmp_path.resolve() / "skills"
    assert paths.datasets_dir == tmp_path.resolve() / "datasets"


def test_module_level_defs_load() -> None:
    from eval_pipelines import definitions

    assert isinstance(definitions.defs, dg.Definitions)
    assert definitions.defs.resolve_job_def("evaluate_skill_version").name == "evaluate_skill_version"


def _dagster_cli() -> list[str]:
    beside = Path(sys.executable).parent / "dagster"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("dagster")
    if found is None:
        pytest.skip("the dagster command is not installed")
    return [found]


@pytest.mark.slow
def test_dagster_definitions_validate(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVAL_PIPELINES_")}
    env["DAGSTER_HOME"] = str(home)
    proc = subprocess.run(
        [*_dagster_cli(), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Validation successful for code location eval_pipelines" in output
