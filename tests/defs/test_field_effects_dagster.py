"""Issue 16 through the Dagster job: the same fields shape the same rows as with ``eval-pipelines run``.

One project holds a skill per field family; each skill version is one partition
of ``evaluate_skill_version``, executed in process against the fake OpenAI
server. The CLI side of each field is in ``tests/cli/test_field_effects.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import (
    ALT_TARGET, HARNESS_TRIALS, PER_TEST_EXECUTION, PROJECT_TARGETS, REPORTING, Models, make_skill, sql, suite_json,
)

pytestmark = pytest.mark.slow

DAY = "2026-11-22"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
JUDGED = "tests:\n  - id: polite\n    input: say hi\n    criteria: The reply greets the user.\n"
JUDGE_TARGETS = PROJECT_TARGETS.replace("default", "sut") + PROJECT_TARGETS.replace("targets:\n", "").replace(
    "default", "judge").replace("gpt-test", "gpt-judge")


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[Models]:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fields")
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


def test_dagster_job_honours_per_test_execution_and_the_judge_target(models: Models, tmp_path: Path) -> None:
    make_skill(tmp_path, {"eval.yaml": PER_TEST_EXECUTION, "targets.yaml": ALT_TARGET}, name="pertest")
    make_skill(tmp_path, {"eval.yaml": JUDGED, "targets.yaml": JUDGE_TARGETS}, name="judged")
    db = tmp_path / "dagster.duckdb"
    result = execute(tmp_path, db, "pertest@1.0.0")
    assert result.success and checks(result)["every_case_has_an_output"]
    assert dict(sql(db, "SELECT test_id, count(*) FROM model_outputs GROUP BY test_id")) == {
        "once": 2, "thrice": 6, "own-evaluator": 6, "fresh": 2}
    assert sql(db, "SELECT DISTINCT assertion_type FROM grades WHERE test_id = 'own-evaluator'") == [("equals",)]

    result = execute(tmp_path, db, "judged@1.0.0")
    assert result.success
    assert sql(db, "SELECT DISTINCT target FROM model_outputs WHERE skill = 'judged'") == [("sut",)]
    assert [r["model"] for r in models.chat_requests(judge=True)] == ["gpt-judge"]


def test_dagster_job_harness_trials_gate_fail_fast_and_reporting(models: Models, tmp_path: Path) -> None:
    make_skill(tmp_path, {"eval.yaml": HARNESS_TRIALS}, name="trials")
    models.replies["beta"] = "wrong"
    make_skill(tmp_path, {"eval/tests.json": suite_json(settings={"failFast": True, "parallelExecution": False})},
               name="failfast")
    make_skill(tmp_path, {"eval.yaml": REPORTING}, name="reported")
    db = tmp_path / "dagster.duckdb"

    result = execute(tmp_path, db, "trials@1.0.0")
    assert result.success and checks(result)["suite_thresholds_met"]  # pass_hat_3 resolves
    assert sql(db, "SELECT count(*) FROM model_outputs WHERE skill = 'trials'") == [(3,)]

    result = execute(tmp_path, db, "failfast@1.0.0")
    assert result.success
    assert sql(db, "SELECT test_id, status FROM test_results WHERE skill = 'failfast' ORDER BY 1") == [
        ("tc-001", "graded"), ("tc-002", "graded"), ("tc-003", "not_run")]

    result = execute(tmp_path, db, "reported@1.0.0")
    assert result.success
    written = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    report = written["eval_report"].materialization.metadata["report_json"].value
    assert Path(report) == tmp_path / "eval-results" / "reported-1.0.0.json"
    assert sorted(p.name for p in (tmp_path / "eval-results").iterdir()) == [
        "reported-1.0.0.json", "reported-1.0.0.md"]
    data = json.loads(Path(report).read_text())["eval_report"]
    assert data["results"] == []
    assert data["metadata"]["warnings"][0].startswith("accepted, not used: eval_suite.reporting.notify_on_failure")
