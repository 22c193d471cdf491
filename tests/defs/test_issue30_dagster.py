"""Issue 30 through the Dagster job: the gate and score items shape the same rows as with
``eval-pipelines run`` (tests/cli/test_issue30_effects.py). One project, three skills, each
skill version one partition of ``evaluate_skill_version`` executed in process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import Models, make_skill, sql, suite_json
from tests.support.issue30_projects import (
    GATED, MODEL_GRADED, MODEL_REPLIES, RUBRIC_CASES, RUBRIC_REPLY, judge_by_input,
)

pytestmark = pytest.mark.slow

DAY = "2026-11-28"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[Models]:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-issue30")
        yield Models(server)


def execute(root: Path, db: Path, skill_version: str) -> dg.ExecuteInProcessResult:
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(skill_versions.name, [skill_version])
        job = build_definitions(str(root), str(db)).resolve_job_def("evaluate_skill_version")
        return job.execute_in_process(
            partition_key=dg.MultiPartitionKey({"date": DAY, "skill_version": skill_version}),
            instance=instance, raise_on_error=False, run_config=QUIET)


def checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def test_dagster_job_gate_and_scores(models: Models, tmp_path: Path) -> None:
    models.server.responder = judge_by_input({**MODEL_REPLIES, "write slides": RUBRIC_REPLY})
    make_skill(tmp_path, {"eval.yaml": GATED}, name="gated")
    make_skill(tmp_path, {"eval.yaml": MODEL_GRADED}, name="modelgraded")
    make_skill(tmp_path, {"eval/tests.json": suite_json(profile="creative", testCases=RUBRIC_CASES)}, name="rubric")
    db = tmp_path / "dagster.duckdb"

    # 1. the failed measured gate fails its case beside the unmeasured one; the threshold check fails
    result = execute(tmp_path, db, "gated@1.0.0")
    assert checks(result)["suite_thresholds_met"] is False
    assert sql(db, "SELECT test_id, status, verdict FROM test_results WHERE skill = 'gated' ORDER BY 1") == [
        ("fine", "graded", "pass"), ("gated", "graded", "fail")]
    assert sql(db, "SELECT value FROM metrics WHERE skill = 'gated' AND target = '*' AND metric = 'pass_rate'") \
        == [(0.5,)]

    # 4. the judge's verdict; 4 of 5 stored as 0.75 and passing without a verdict
    result = execute(tmp_path, db, "modelgraded@1.0.0")
    assert result.success
    assert sql(db, "SELECT test_id, score, passed FROM grades WHERE skill = 'modelgraded' ORDER BY 1") == [
        ("good", 0.75, True), ("judge-says-no", 0.75, False), ("no-verdict", 0.75, True), ("own-mark", 0.75, False)]
    details = json.loads(sql(db, "SELECT details FROM grades WHERE test_id = 'judge-says-no'")[0][0])
    assert details["judge_passed"] is False and details["decided_by"] == "judge"

    # 5. raw score stored, calibrated beside it, mean_score of raw scores
    result = execute(tmp_path, db, "rubric@1.0.0")
    assert result.success
    ((score, calibrated),) = sql(db, "SELECT score, calibrated_score FROM grades WHERE skill = 'rubric' "
                                     "AND assertion_type = 'llm_judge'")
    assert score == pytest.approx(0.625) and calibrated == pytest.approx(0.8125)
    (mean,) = sql(db, "SELECT value FROM metrics WHERE skill = 'rubric' AND target = '*' AND metric = 'mean_score'")[0]
    assert mean == pytest.approx((0.625 + 1.0) / 2)
