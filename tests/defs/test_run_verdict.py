"""What the Dagster UI shows for an evaluation: a failed gate fails the run (red in the Runs list)
with the numbers in its message; a check with nothing to check is skipped, not green."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.pipeline.stages import STAGE_NAMES

SUITE = """\
name: {name}
description: three capitals
execution:
  targets: [local]
{thresholds}
tests:
  - id: france
    input: capital of France?
    assert: [{{type: contains, value: Paris}}]
  - id: spain
    input: capital of Spain?
    assert: [{{type: contains, value: Madrid}}]
  - id: italy
    input: capital of Italy?
    assert: [{{type: contains, value: Rome}}]
"""


@pytest.fixture
def project(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: ANN001
    root = tmp_path / "project"
    for name, thresholds in (("gated", "thresholds:\n  required_pass_rate: 0.9"), ("ungated", "")):
        skill = root / "skills" / name
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\nversion: 1.0.0\n---\nAnswer.\n")
        (skill / "eval.yaml").write_text(SUITE.format(name=name, thresholds=thresholds))
    (root / "targets.yaml").write_text(
        f"targets:\n  - name: local\n    type: openai\n    model: m\n    base_url: {fake_openai.base_url}\n"
        f"    api_key_env: FAKE_KEY\n")
    fake_openai.answers.update({"capital of France?": "Paris", "capital of Spain?": "Barcelona",
                                "capital of Italy?": "Rome"})
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    return root


def run(project: Path, instance: dg.DagsterInstance, key: str) -> dg.ExecuteInProcessResult:
    if key not in instance.get_dynamic_partitions(skill_versions.name):
        instance.add_dynamic_partitions(skill_versions.name, [key])
    job = build_definitions(str(project), str(project / "store.duckdb")).resolve_job_def("evaluate_skill_version")
    return job.execute_in_process(partition_key=dg.MultiPartitionKey({"date": "2026-11-20", "skill_version": key}),
                                  instance=instance, raise_on_error=False)


@pytest.mark.slow  # two Dagster runs in process
def test_a_failed_gate_fails_the_run_with_the_numbers(project: Path) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        result = run(project, instance, "gated@1.0.0")
        assert not result.success
        # Every stage still stored its rows: the run failed because the evaluation did. The asset
        # whose check failed (metrics) is observed, not materialised, so its partition shows failed.
        materialized = {m.asset_key.to_user_string() for m in result.asset_materializations_for_node(
            "evaluate_partition")}
        assert materialized == set(STAGE_NAMES) - {"metrics"} | {"skill_trends/gated"}  # the skill's data point
        (failure,) = [e for e in result.all_events if e.is_step_failure]
        message = failure.step_failure_data.user_failure_data.description
        assert message == "evaluation failed: suite_thresholds_met: required_pass_rate = 0.667 < 0.900"
        tags = instance.get_run_by_id(result.run_id).tags
        assert (tags["eval/verdict"], tags["eval/failed_checks"]) == ("gate_failed", "suite_thresholds_met")
        checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
        assert not checks["suite_thresholds_met"].passed
        assert checks["suite_thresholds_met"].description == "required_pass_rate = 0.667 < 0.900"
        assert checks["suite_thresholds_met"].severity == dg.AssetCheckSeverity.ERROR
        # The event log shows metadata, not descriptions: the numbers are in the first entry too.
        assert checks["suite_thresholds_met"].metadata["result"].value == "required_pass_rate = 0.667 < 0.900"
        # No baseline: in a failed run this says "skipped" as a warning instead of being left
        # for Dagster to show as "execution failed".
        regression = checks["no_significant_regression"]
        assert (regression.passed, regression.severity, regression.description) == (
            False, dg.AssetCheckSeverity.WARN, "skipped: no baseline to compare with yet")
        assert checks["blocking_gates"].passed  # not blocking: nothing to stop


@pytest.mark.slow
def test_a_check_with_nothing_to_check_is_skipped_not_passed(project: Path) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        result = run(project, instance, "ungated@1.0.0")
        assert result.success
        evaluated = {e.check_name for e in result.get_asset_check_evaluations()}
        # No thresholds, no baseline: neither is reported as passed.
        assert evaluated == {"every_case_has_an_output", "blocking_gates"}
        messages = [e.user_message for e in instance.all_logs(result.run_id) if "skipped:" in e.user_message]
        assert any("suite_thresholds_met skipped: no thresholds declared" in m for m in messages), messages
        key = dg.AssetCheckKey(dg.AssetKey("metrics"), "suite_thresholds_met")
        record = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
        # Planned, never evaluated, in a run that succeeded: the UI resolves this to "Skipped".
        assert record.status.value == "PLANNED" and record.run_id == result.run_id
        # Nothing failed, but nothing was gated either: a 0-100% pass rate is not called "passed".
        assert instance.get_run_by_id(result.run_id).tags["eval/verdict"] == "no_thresholds"
