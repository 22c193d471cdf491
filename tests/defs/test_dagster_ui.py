"""What the Dagster UI shows, through Dagster's own tools (execute_in_process on an ephemeral
instance, the instance's partition status and event records, the definitions' specs):

- a failed evaluation's partition is FAILED for the asset whose check failed (red in the
  partition grid and counted by the "Failed" filter), the other assets stay materialised;
- each skill has a ``skill_trends/<skill>`` asset with a data point (materialisation) per evaluation;
- column descriptions come from docs/schema.md, every asset has code references and a table name;
- the nightly schedule is off by default, the sensor on.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs import schedules
from eval_pipelines.defs.column_docs import COLUMN_DESCRIPTIONS
from eval_pipelines.defs.metadata import column_description, table_metadata
from eval_pipelines.defs.partitions import eval_partitions
from eval_pipelines.defs.trends import history_markdown, trend_key
from eval_pipelines.pipeline.stages import STAGES
from eval_pipelines.store.connection import connect
from tests.defs.test_run_verdict import project, run  # noqa: F401 - the fixture is used by name
from tests.support.schema_doc import column_descriptions, render_module

ROOT = Path(__file__).resolve().parents[2]


def status(instance: dg.DagsterInstance, asset: str, key: str) -> dg.AssetPartitionStatus | None:
    return instance.get_status_by_partition(dg.AssetKey(asset), [key], eval_partitions).get(key)


@pytest.mark.slow  # two Dagster runs in process
def test_a_failed_check_fails_its_assets_partition_and_each_run_adds_a_trend_point(project: Path) -> None:  # noqa: F811
    with dg.DagsterInstance.ephemeral() as instance:
        passed = run(project, instance, "ungated@1.0.0")
        failed = run(project, instance, "gated@1.0.0")
        assert passed.success and not failed.success
        ok_key, failed_key = "2026-11-20|ungated@1.0.0", "2026-11-20|gated@1.0.0"
        # suite_thresholds_met (on metrics) failed: that partition of metrics is FAILED; the
        # stages around it stored their rows and are materialised.
        assert status(instance, "metrics", failed_key) == dg.AssetPartitionStatus.FAILED
        for stage in ("grades", "test_results", "regression_report", "eval_report"):
            assert status(instance, stage, failed_key) == dg.AssetPartitionStatus.MATERIALIZED, stage
        assert status(instance, "metrics", ok_key) == dg.AssetPartitionStatus.MATERIALIZED
        with connect(project / "store.duckdb") as con:
            assert con.execute("SELECT count(*) FROM metrics WHERE skill_version = 'gated@1.0.0'").fetchone()[0]
        # The check's result is recorded for the partition, and the metrics numbers stay on the
        # asset's page as an observation that says why it is not materialised.
        key = dg.AssetCheckKey(dg.AssetKey("metrics"), "suite_thresholds_met")
        record = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
        assert (record.status.value, record.partition) == ("FAILED", failed_key)
        (observation,) = [o for o in failed.asset_observations_for_node("evaluate_partition")
                          if o.asset_key == dg.AssetKey("metrics")]
        assert observation.partition == failed_key
        assert observation.metadata["evaluation"].value == (
            "failed: suite_thresholds_met: required_pass_rate = 0.667 < 0.900")
        assert observation.metadata["pass_rate"].value == pytest.approx(2 / 3)

        # One trend asset per skill, a data point (materialisation) per evaluation, unpartitioned
        # (its plots run over time for that skill alone): numbers, version, date and verdict.
        records = instance.fetch_materializations(trend_key("gated"), limit=10).records
        assert len(records) == 1
        meta = records[0].asset_materialization.metadata
        assert meta["pass_rate"].value == pytest.approx(2 / 3)
        assert (meta["version"].value, meta["eval_date"].value, meta["verdict"].value) == (
            "1.0.0", "2026-11-20", "gate_failed")
        assert isinstance(meta["latency_p50_ms"].value, float)
        assert meta["pass_rate_by_version_and_night"].value == (
            "| version | 2026-11-20 |\n|---|---|\n| 1.0.0 | 67% |")
        assert records[0].asset_materialization.partition is None
        assert instance.fetch_materializations(trend_key("ungated"), limit=10).records[0] \
            .asset_materialization.metadata["verdict"].value == "no_thresholds"


def test_trend_table_is_versions_by_nights() -> None:
    rows = [("1.0.0", "2026-11-01", 0.5), ("1.1.0", "2026-11-01", 1.0), ("1.1.0", "2026-11-02", 0.75)]
    assert history_markdown(rows) == (
        "| version | 2026-11-01 | 2026-11-02 |\n|---|---|---|\n| 1.0.0 | 50% |  |\n| 1.1.0 | 100% | 75% |")


def test_one_trend_asset_per_bundled_skill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVAL_PIPELINES_SKILLS_DIR", raising=False)
    shutil.copytree(ROOT / "skills", tmp_path / "skills")
    specs = {s.key: s for s in build_definitions(str(tmp_path), str(tmp_path / "s.duckdb")).resolve_all_asset_specs()}
    skills = sorted(p.name for p in (tmp_path / "skills").iterdir() if p.is_dir())
    trends = sorted(key.path[1] for key in specs if key.path[0] == "skill_trends")
    assert trends == skills and "support-triage" in trends
    spec = specs[trend_key("support-triage")]
    assert spec.group_name == "skill_trends" and spec.partitions_def is None
    assert [d.asset_key for d in spec.deps] == [dg.AssetKey("metrics")]


def test_column_descriptions_agree_with_docs_schema() -> None:
    described = column_descriptions()
    assert COLUMN_DESCRIPTIONS == described, "regenerate: python -m tests.support.schema_doc"
    assert (ROOT / "eval_pipelines/defs/column_docs.py").read_text() == render_module(described)


def test_every_column_of_the_stage_tables_is_described(tmp_path: Path) -> None:
    with connect(tmp_path / "s.duckdb") as con:
        for stage in STAGES:
            if not stage.tables:
                continue
            table = stage.tables[0]
            columns = [(name, kind) for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall()]
            schema = table_metadata(columns, table, 0)["dagster/column_schema"]
            undescribed = [c.name for c in schema.columns if not c.description]
            assert not undescribed, f"{table}: describe {undescribed} in docs/schema.md"
    assert column_description("grades", "eval_date").startswith("the evaluation date partition")


def test_assets_have_code_references_and_table_names(tmp_path: Path) -> None:
    specs = {s.key.to_user_string(): s for s in build_definitions(str(tmp_path), str(tmp_path / "s.duckdb"))
             .resolve_all_asset_specs()}
    for stage in STAGES:
        meta = specs[stage.name].metadata
        refs = meta["dagster/code_references"].code_references
        assert refs[0].label == f"stage {stage.run.__name__}"
        # A stage's work is in stages.py or, for the skill-only stages, in its own module of pipeline/.
        assert Path(refs[0].file_path).name in ("stages.py", "triggers.py", "blind.py") and refs[0].line_number > 0
        assert Path(refs[1].file_path).name == "assets.py"  # the multi_asset, from with_source_code_references
        if stage.tables:
            assert meta["dagster/table_name"] == f"main.{stage.tables[0]}"


def test_the_nightly_schedule_is_off_unless_switched_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert schedules.nightly_default_status({}) == dg.DefaultScheduleStatus.STOPPED
    assert schedules.nightly_default_status({"EVAL_PIPELINES_NIGHTLY": "off"}) == dg.DefaultScheduleStatus.STOPPED
    for value in ("on", "1", "true", "YES"):
        assert schedules.nightly_default_status({"EVAL_PIPELINES_NIGHTLY": value}) == dg.DefaultScheduleStatus.RUNNING
    monkeypatch.setenv("EVAL_PIPELINES_NIGHTLY", "on")
    try:
        module = importlib.reload(schedules)
        assert module.nightly_regression.default_status == dg.DefaultScheduleStatus.RUNNING
    finally:
        monkeypatch.delenv("EVAL_PIPELINES_NIGHTLY")
        importlib.reload(schedules)
    defs = build_definitions(str(tmp_path), str(tmp_path / "s.duckdb"))
    assert defs.resolve_sensor_def("new_skill_versions").default_status == dg.DefaultSensorStatus.RUNNING


@pytest.mark.slow  # starts dg, which loads the code location in a subprocess
def test_dg_check_defs_loads_the_project_offline(tmp_path: Path) -> None:
    """`make validate` = `dg check defs`: [tool.dg] in pyproject.toml names the code location."""
    dg_cli = Path(sys.executable).parent / "dg"
    assert dg_cli.exists(), "dagster-dg-cli is a dependency (pyproject.toml)"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVAL_PIPELINES_", "DAGSTER_"))}
    env |= {"DAGSTER_HOME": str(tmp_path), "EVAL_PIPELINES_DB": str(tmp_path / "s.duckdb"),
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    done = subprocess.run([str(dg_cli), "check", "defs"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "All definitions loaded successfully" in output
    assert "SupersessionWarning" not in output
