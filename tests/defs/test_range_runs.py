"""One run over several skill versions (the nightly batch, defs/range_run.py): each version is
reported under its own partition, with the rows, materialisations, checks and trend point a run
of that version alone gives; a failing version fails alone and the run names it."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.defs.trends import trend_key
from eval_pipelines.pipeline.stages import STAGE_NAMES
from eval_pipelines.store.connection import TABLES, connect
from tests.defs.test_run_verdict import project  # noqa: F401 - the fixture: skills gated and ungated

DAY = "2026-11-20"
VERSIONS = ["gated@1.0.0", "broken@1.0.0", "ungated@1.0.0"]


def counts(db: Path, version: str, day: str) -> dict[str, int]:
    with connect(db) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t} WHERE skill_version = ? AND eval_date = ?",
                               [version, day]).fetchone()[0] for t in TABLES}


def metric_values(db: Path) -> list[tuple]:
    with connect(db) as con:
        return con.execute("SELECT target, metric, value FROM metrics WHERE skill_version = 'ungated@1.0.0' "
                           "AND metric LIKE 'pass%' ORDER BY ALL").fetchall()


def check_evaluations(instance: dg.DagsterInstance, asset: str, check: str) -> dict[str, tuple[bool, str]]:
    history = instance.event_log_storage.get_asset_check_execution_history(
        dg.AssetCheckKey(dg.AssetKey(asset), check), limit=20)
    found = {}
    for record in history:
        evaluation = record.event.dagster_event.event_specific_data
        if isinstance(evaluation, dg.AssetCheckEvaluation):  # not the runs' "planned" records
            found[record.partition] = (evaluation.passed, evaluation.severity.value)
    return found


@pytest.mark.slow  # two Dagster runs in process (one over three versions, one of a version alone)
def test_one_run_over_three_versions(project: Path) -> None:  # noqa: F811
    broken = project / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\ndescription: d\nversion: 1.0.0\n---\nAnswer.\n")
    (broken / "eval.yaml").write_text("name: broken\ntests:\n  - id: one\n    inputt: typo\n")
    db = project / "store.duckdb"
    job = build_definitions(str(project), str(db)).resolve_job_def("evaluate_skill_version")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(skill_versions.name, VERSIONS)
        result = job.execute_in_process(instance=instance, raise_on_error=False, tags={
            "dagster/asset_partition_range_start": f"{DAY}|{VERSIONS[0]}",
            "dagster/asset_partition_range_end": f"{DAY}|{VERSIONS[-1]}"})

        # The batch fails, naming the two versions that failed and why; the third was evaluated.
        assert not result.success
        (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
        message = failure.step_failure_data.user_failure_data.description
        assert message.startswith("2 of 3 skill versions failed:")
        assert f"- gated@1.0.0: suite_thresholds_met:" in message
        assert "- broken@1.0.0: eval_suite: invalid skill package or suite: " in message
        assert "tests[0].inputt: unknown field 'inputt'" in message.split("broken@1.0.0")[1]
        tags = instance.get_run_by_id(result.run_id).tags
        assert tags["eval/verdict"] == "error"
        assert tags["eval/verdicts"] == "error: 1, gate_failed: 1, no_thresholds: 1"
        assert tags["eval/failed_versions"] == "gated@1.0.0,broken@1.0.0"

        # Each version under its own partition: ungated materialised at every stage, gated up to
        # the stage whose gate failed (its later stages did not run), broken at none.
        for stage in STAGE_NAMES:
            done = {key.split("|")[1] for key in instance.get_materialized_partitions(dg.AssetKey(stage))
                    if key.startswith(DAY)}
            assert "ungated@1.0.0" in done and "broken@1.0.0" not in done, stage
        assert "gated@1.0.0" in {key.split("|")[1] for key in
                                 instance.get_materialized_partitions(dg.AssetKey(STAGE_NAMES[0]))}

        # Checks per partition: the gate failed for gated (an error); for ungated it had nothing to
        # check, and as the run failed it says so as a warning rather than "execution failed".
        gate = check_evaluations(instance, "metrics", "suite_thresholds_met")
        assert gate[f"{DAY}|gated@1.0.0"] == (False, "ERROR")
        assert gate[f"{DAY}|ungated@1.0.0"] == (False, "WARN")
        assert f"{DAY}|broken@1.0.0" not in gate

        (point,) = instance.fetch_materializations(trend_key("ungated"), limit=10).records
        assert point.asset_materialization.metadata["partition"].value == f"{DAY}|ungated@1.0.0"
        assert point.asset_materialization.description == f"ungated@1.0.0 on {DAY}: no_thresholds"
    assert counts(db, "broken@1.0.0", DAY)["model_outputs"] == 0

    # The same rows as a run of the version alone (its own store and instance).
    alone_db = project / "alone.duckdb"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(skill_versions.name, ["ungated@1.0.0"])
        alone = build_definitions(str(project), str(alone_db)).resolve_job_def("evaluate_skill_version") \
            .execute_in_process(instance=instance, raise_on_error=False,
                                partition_key=dg.MultiPartitionKey({"date": DAY, "skill_version": "ungated@1.0.0"}))
        assert alone.success
    assert counts(db, "ungated@1.0.0", DAY) == counts(alone_db, "ungated@1.0.0", DAY)
    assert counts(db, "ungated@1.0.0", DAY)["model_outputs"] == 3
    assert metric_values(db) == metric_values(alone_db) and len(metric_values(db)) > 2
