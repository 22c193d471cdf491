"""The job ``evaluate_skill_version`` end to end: real Dagster runs, real DuckDB rows.

Every test builds a project folder in ``tmp_path`` (copies of the example
skills, ``datasets/`` and ``targets.yaml``), registers the skill version as a
dynamic partition on a Dagster instance, executes the job for one
``date x skill_version`` partition and reads the tables back from DuckDB.
The OpenAI tests go through the real ``openai`` client to the local fake server.
"""

from __future__ import annotations

import gc
import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import dagster as dg
import pytest

import eval_pipelines.run.targets.openai_compat as openai_compat
from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.assets import ASSETS
from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess
from eval_pipelines.store.connection import TABLES, connect
from eval_pipelines.pipeline.stages import STAGE_NAMES
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dagster"
JOB = "evaluate_skill_version"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
CALC = "calculator@1.0.0"
DAY1, DAY2 = "2026-11-20", "2026-11-21"
SECRET = "sk-test-never-stored-4242"


# ---- helpers -------------------------------------------------------------------


def make_project(root: Path, *skills: str) -> Path:
    """A project folder: the given ``skills/<name>/<dir>`` copies, datasets/ and targets.yaml."""
    for skill in skills:
        shutil.copytree(PROJECT / "skills" / skill, root / "skills" / skill)
    shutil.copytree(PROJECT / "datasets", root / "datasets")
    shutil.copy(PROJECT / "targets.yaml", root / "targets.yaml")
    return root


def key(skill_version: str, day: str = DAY1) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"date": day, "skill_version": skill_version})


def execute(root: Path, db: Path, instance: dg.DagsterInstance, skill_version: str,
            day: str = DAY1) -> dg.ExecuteInProcessResult:
    if skill_version not in instance.get_dynamic_partitions(skill_versions.name):
        instance.add_dynamic_partitions(skill_versions.name, [skill_version])
    job = build_definitions(str(root), str(db)).resolve_job_def(JOB)
    return job.execute_in_process(partition_key=key(skill_version, day), instance=instance,
                                  raise_on_error=False, run_config=QUIET)


def sql(db: Path, query: str, params: list[Any] | None = None) -> list[tuple]:
    """Query the results database (the project's own connect: schema applied, then closed)."""
    with connect(db) as con:
        return con.execute(query, params or []).fetchall()


def counts(db: Path, skill_version: str, day: str | None = None) -> dict[str, int]:
    where = "skill_version = ?" + (" AND eval_date = ?" if day else "")
    params = [skill_version] + ([day] if day else [])
    return {t: sql(db, f"SELECT count(*) FROM {t} WHERE {where}", params)[0][0] for t in TABLES}


def overall(db: Path, skill_version: str, day: str = DAY1) -> dict[str, float]:
    rows = sql(db, "SELECT metric, value FROM metrics WHERE skill_version = ? AND eval_date = ? "
                   "AND target = '*'", [skill_version, day])
    return dict(rows)


def checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def failure_messages(result: dg.ExecuteInProcessResult) -> dict[str, str]:
    return {e.step_key: e.step_failure_data.error.message
            for e in result.get_step_failure_events()}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME",
                 "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


# ---- the calculator, run once for the module ----------------------------------


@pytest.fixture(scope="module")
def calculator_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Any]]:
    root = make_project(tmp_path_factory.mktemp("calc-project"), "calculator/v1.0.0")
    db = root / "results.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
            mp.delenv(name, raising=False)
        with dg.DagsterInstance.ephemeral() as inst:
            result = execute(root, db, inst, CALC)
            yield root, db, result


def test_calculator_run_succeeds_and_materialises_every_stage(calculator_run) -> None:
    _, _, result = calculator_run
    assert result.success, failure_messages(result)
    materialized = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    # Every table is some asset's partition; the metrics asset also writes case_metrics. The
    # skill's trend asset gets this evaluation as a data point (unpartitioned, defs/trends.py).
    assert set(materialized) == {"eval_suite", "eval_datasets", "test_cases", "model_outputs", "grades",
                                 "test_results", "metrics", "regression_report", "trigger_results",
                                 "blind_comparisons", "eval_report", "skill_trends/calculator"}
    assert materialized.pop("skill_trends/calculator").partition is None
    for event in materialized.values():
        assert event.partition == str(key(CALC))
    # No thresholds, no baseline yet: those checks are skipped, not passed.
    assert checks(result) == {"every_case_has_an_output": True, "blocking_gates": True}
    # What the step froze out of the garbage collector's way (pipeline/collector.py) is handed back:
    # a process evaluating partition after partition keeps no garbage pending at a freeze.
    assert gc.get_freeze_count() == 0


# The calculator's first run has no dataset file, no baseline, no trigger set, no blind comparison
# and no run without the skill: those tables stay empty.
EMPTY_FOR_CALCULATOR = {"datasets", "regressions", "trigger_results", "blind_comparisons", "uplifts"}


def test_calculator_rows_in_every_table(calculator_run) -> None:
    _, db, result = calculator_run
    found = counts(db, CALC, DAY1)
    metric_rows = found.pop("metrics")
    # 6 cases x (trials, passes, pass_rate, mean_score, its interval, pass@1, pass^1, flaky, case_passed)
    assert found.pop("case_metrics") == 6 * 10
    # Inline cases only (no external dataset) and no earlier version to compare with.
    assert (found.pop("datasets"), found.pop("regressions")) == (0, 0)
    # No trigger set, no blind comparison asked for, no run without the skill (not an Agent Skill).
    assert (found.pop("trigger_results"), found.pop("blind_comparisons"), found.pop("uplifts", 0)) == (0, 0, 0)
    assert found == {"suites": 1, "test_cases": 6, "model_outputs": 6, "grades": 6, "test_results": 6}
    assert metric_rows > 0 and metric_rows % 2 == 0  # the same metrics for '*' and for calc-script
    # Every row belongs to this run and this partition.
    for table in set(TABLES) - EMPTY_FOR_CALCULATOR:
        assert sql(db, f"SELECT DISTINCT run_id, eval_date, skill, version FROM {table}") == [
            (result.run_id, DAY1, "calculator", "1.0.0")]
    (suite,) = sql(db, "SELECT suite, format, n_tests, trials FROM suites")
    assert suite[2:] == (6, 1)


def test_calculator_verdicts_and_pass_rate(calculator_run) -> None:
    _, db, _ = calculator_run
    verdicts = dict(sql(db, "SELECT test_id, verdict FROM test_results WHERE skill_version = ?", [CALC]))
    # 1.0.0 does not understand `**`: tc-005 (2 ** 10) fails, everything else passes.
    assert verdicts == {"tc-001": "pass", "tc-002": "pass", "tc-003": "pass", "tc-004": "pass",
                        "tc-005": "fail", "tc-006": "pass"}
    assert {s for (s,) in sql(db, "SELECT DISTINCT status FROM test_results")} == {"graded"}
    outputs = dict(sql(db, "SELECT test_id, output FROM model_outputs"))
    assert outputs["tc-001"] == "4" and outputs["tc-004"] == "1.75"
    assert sql(db, "SELECT passed, reason FROM grades WHERE test_id = 'tc-005'")[0][0] is False
    (rate,) = sql(db, "SELECT value FROM metrics WHERE target = '*' AND metric = 'pass_rate'")
    assert rate[0] == pytest.approx(5 / 6)
    metrics = overall(db, CALC)
    assert metrics["passed"] == 5 and metrics["failed"] == 1 and metrics["errors"] == 0
    assert metrics["cases"] == 6


def test_rematerialising_replaces_and_a_new_date_keeps_history(calculator_run, tmp_path: Path,
                                                                instance: dg.DagsterInstance) -> None:
    root, original_db, first = calculator_run
    db = tmp_path / "copy.duckdb"
    shutil.copy(original_db, db)
    before = counts(db, CALC, DAY1)

    again = execute(root, db, instance, CALC, DAY1)
    assert again.success, failure_messages(again)
    assert counts(db, CALC, DAY1) == before  # replaced, not appended
    for table in set(TABLES) - EMPTY_FOR_CALCULATOR:
        assert sql(db, f"SELECT DISTINCT run_id FROM {table}") == [(again.run_id,)]
    assert again.run_id != first.run_id

    nightly = execute(root, db, instance, CALC, DAY2)
    assert nightly.success, failure_messages(nightly)
    # The second night is compared with the first (model drift): 6 cases + 1 target row + 1 breakage
    # row, no change; 6 single-trial cases cannot rule out a 5-point drop: inconclusive, said so.
    assert counts(db, CALC, DAY2) == before | {"regressions": 8}
    assert sql(db, "SELECT DISTINCT comparison, baseline_eval_date, level, change FROM regressions "
                   "WHERE eval_date = ? ORDER BY level", [DAY2]) == [
        ("previous_night", DAY1, "breakage", "within_chance"), ("previous_night", DAY1, "case", "unchanged"),
        ("previous_night", DAY1, "target", "inconclusive")]
    assert counts(db, CALC, DAY1) == before  # yesterday's rows are still there
    assert sql(db, "SELECT eval_date, count(*) FROM test_results GROUP BY 1 ORDER BY 1") == [
        (DAY1, 6), (DAY2, 6)]
    assert sql(db, "SELECT eval_date, value FROM metrics WHERE target = '*' AND metric = 'pass_rate' "
                   "ORDER BY 1") == [(DAY1, pytest.approx(5 / 6)), (DAY2, pytest.approx(5 / 6))]


# ---- support-triage: external datasets and the thresholds check --------------


@pytest.mark.parametrize(
    ("skill_dir", "skill_version", "passed", "gate_met"),
    [("support-triage/1.0.0", "support-triage@1.0.0", 9, True),
     ("support-triage/2.0.0", "support-triage@2.0.0", 0, False)],
)
def test_support_triage_datasets_and_threshold_check(tmp_path: Path, instance: dg.DagsterInstance,
                                                     skill_dir: str, skill_version: str,
                                                     passed: int, gate_met: bool) -> None:
    root = make_project(tmp_path, skill_dir)
    db = tmp_path / "results.duckdb"
    result = execute(root, db, instance, skill_version)
    # A missed gate fails the check, and the run with it (red in the Runs list), after
    # every stage stored its rows; the failure names the numbers.
    assert result.success is gate_met, failure_messages(result)
    if not gate_met:
        (failure,) = result.get_step_failure_events()
        assert failure.step_failure_data.user_failure_data.description.startswith(
            "evaluation failed: suite_thresholds_met: required_pass_rate = 0.000 < 0.800")
        # metrics, whose check failed, is observed instead of materialised (its partition shows failed).
        assert {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()} == \
            set(STAGE_NAMES) - {"metrics"} | {"skill_trends/support-triage"}
    found_checks = checks(result)
    assert {k: found_checks[k] for k in ("every_case_has_an_output", "suite_thresholds_met")} == {
        "every_case_has_an_output": True, "suite_thresholds_met": gate_met}
    assert found_checks["blocking_gates"] is True  # the suite does not declare `blocking: true`
    found = counts(db, skill_version)
    assert (found["suites"], found["test_cases"], found["model_outputs"], found["test_results"]) == (1, 10, 10, 10)
    assert found["grades"] > 10  # suite-level assertions apply to every case, plus each case's own
    sources = {Path(f).name for (f,) in sql(db, "SELECT DISTINCT source_file FROM test_cases")}
    assert {"support_tickets.jsonl", "support_tickets_extra.csv", "eval.yaml"} <= sources
    metrics = overall(db, skill_version)
    assert metrics["passed"] == passed
    assert metrics["pass_rate"] == pytest.approx(passed / 10)
    (thresholds,) = sql(db, "SELECT thresholds FROM suites")
    assert '"required_pass_rate": 0.8' in thresholds[0]


# ---- a real model API: the openai client against the fake server ---------------


def make_openai_skill(root: Path, base_url: str, max_retries: int = 2) -> Path:
    skill = root / "skills" / "scripted-bot" / "1.0.0"
    shutil.copytree(FIXTURES / "openai-skill", skill)
    (skill / "targets.yaml").write_text(
        "targets:\n"
        "  - name: fake-model\n"
        "    type: openai\n"
        "    model: fake\n"
        f"    base_url: {base_url}\n"
        f"    max_retries: {max_retries}\n"
        "    timeout_s: 5\n"
        "    price_input_per_million: 1.0\n"
        "    price_output_per_million: 2.0\n"
    )
    shutil.copy(PROJECT / "targets.yaml", root / "targets.yaml")  # `default` exists but is not used
    return skill


BOT = "scripted-bot@1.0.0"
ANSWERS = {
    "What is the capital of France?": "Paris is the capital.",
    "What is 2 + 2?": "4",
    "What colour is a clear sky?": "green",  # wrong on purpose
    "Answer with a JSON object holding the key ok.": '{"ok": true}',
}


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "BACKOFF_BASE_S", 0.01)


def test_openai_target_outputs_come_from_the_server(tmp_path: Path, instance: dg.DagsterInstance,
                                                    fake_openai: FakeOpenAIServer, fast_backoff: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    # The skill's own targets.yaml names the server: its key goes there only to a host the operator
    # trusts (run/targets/key_policy.py), read by the run through Dagster's EnvVar like the key.
    monkeypatch.setenv("EVAL_PIPELINES_TRUSTED_HOSTS", "127.0.0.1")
    make_openai_skill(tmp_path, fake_openai.base_url)
    fake_openai.answers = dict(ANSWERS)
    db = tmp_path / "results.duckdb"

    result = execute(tmp_path, db, instance, BOT)
    assert result.success, failure_messages(result)
    # The fixture suite declares no thresholds: suite_thresholds_met is skipped, not passed.
    assert {k: v for k, v in checks(result).items() if k in ("every_case_has_an_output", "suite_thresholds_met")} == {
        "every_case_has_an_output": True}

    # One request per case, through the real client, with the skill's prompt and the key from the env.
    assert fake_openai.request_count == 4
    assert {r["model"] for r in fake_openai.requests} == {"fake"}
    for body in fake_openai.requests:  # SKILL.md's body is the system prompt
        assert body["messages"][0]["role"] == "system"
        assert body["messages"][0]["content"].strip() == "Answer the question in as few words as possible."
        assert body["messages"][-1]["role"] == "user" and body["messages"][-1]["content"] in ANSWERS
    assert {h["authorization"] for h in fake_openai.headers} == {f"Bearer {SECRET}"}

    outputs = dict(sql(db, "SELECT test_id, output FROM model_outputs WHERE error IS NULL"))
    assert outputs == {"capital": ANSWERS["What is the capital of France?"], "sum": "4", "sky": "green",
                       "json-answer": '{"ok": true}'}
    assert sql(db, "SELECT min(prompt_tokens) > 0, min(completion_tokens) > 0, min(cost_usd) > 0, "
                   "max(attempts) FROM model_outputs") == [(True, True, True, 1)]
    verdicts = dict(sql(db, "SELECT test_id, verdict FROM test_results"))
    assert verdicts == {"capital": "pass", "sum": "pass", "sky": "fail", "json-answer": "pass"}
    assert overall(db, BOT)["pass_rate"] == pytest.approx(0.75)
    assert sql(db, "SELECT reason FROM grades WHERE test_id = 'sky'")[0][0]

    # The key is read at run time and stored nowhere.
    for table in TABLES:
        dumped = sql(db, f"SELECT count(*) FROM {table} t WHERE contains(CAST(t AS VARCHAR), ?)", [SECRET])
        assert dumped == [(0,)], table

    # Each stage re-runs on its own from what DuckDB holds: re-grading calls no model.
    fake_openai.reset_counts()
    resources = {"project": EvalProject(root=str(tmp_path)),
                 "store": EvalStore(db_path=str(db)), "models": ModelAccess()}
    regrade = dg.materialize(ASSETS, selection=["grades", "test_results", "metrics"],
                             partition_key=key(BOT), instance=instance, resources=resources,
                             run_config=QUIET)
    assert regrade.success
    assert fake_openai.request_count == 0
    assert dict(sql(db, "SELECT test_id, verdict FROM test_results")) == verdicts
    assert sql(db, "SELECT DISTINCT run_id FROM grades") == [(regrade.run_id,)]


def test_openai_server_failing_every_request_gives_error_rows(tmp_path: Path, instance: dg.DagsterInstance,
                                                              fake_openai: FakeOpenAIServer,
                                                              fast_backoff: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # the operator has not trusted the skill's chosen host
    monkeypatch.delenv("EVAL_PIPELINES_TRUSTED_HOSTS", raising=False)
    make_openai_skill(tmp_path, fake_openai.base_url, max_retries=1)
    fake_openai.fault_rate = 1.0
    fake_openai.faults = ["500"]
    db = tmp_path / "results.duckdb"

    result = execute(tmp_path, db, instance, BOT)
    assert result.success, failure_messages(result)
    # max_retries=1: two attempts per case, then an error row.
    assert fake_openai.request_count == 4 * 2
    assert set(fake_openai.faults_served) == {"500"}

    rows = sql(db, "SELECT test_id, output, error, attempts FROM model_outputs ORDER BY test_id")
    assert [r[0] for r in rows] == ["capital", "json-answer", "sky", "sum"]  # no case lost
    for _, output, error, attempts in rows:
        assert output is None and attempts == 2
        assert "500" in error and "after 2 attempt" in error
        assert "the key in $OPENAI_API_KEY is not sent to 127.0.0.1" in error  # and why it failed
    assert {h.get("authorization") for h in fake_openai.headers} == {None}  # the key never left
    (warnings,) = sql(db, "SELECT warnings FROM suites")[0]
    assert any("target fake-model: the key in $OPENAI_API_KEY is not sent" in w for w in json.loads(warnings))
    assert sql(db, "SELECT DISTINCT status FROM test_results") == [("error",)]
    assert sql(db, "SELECT count(*) FROM test_results") == [(4,)]
    assert sql(db, "SELECT count(*) FROM grades") == [(0,)]  # nothing to grade
    metrics = overall(db, BOT)
    assert metrics["errors"] == 4 and metrics["pass_rate"] == 0
    assert checks(result)["every_case_has_an_output"] is True
    (evaluation,) = [e for e in result.get_asset_check_evaluations()
                     if e.check_name == "every_case_has_an_output"]
    assert evaluation.metadata["errors"].value == 4
    assert evaluation.metadata["rows"].value == evaluation.metadata["expected_rows"].value == 4


# ---- problems are reported, not thrown as tracebacks ---------------------------


def test_broken_suite_fails_with_a_readable_message(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    shutil.copytree(FIXTURES / "broken-suite", tmp_path / "skills" / "broken-suite" / "1.0.0")
    db = tmp_path / "results.duckdb"
    result = execute(tmp_path, db, instance, "broken-suite@1.0.0")

    assert not result.success
    assert result.get_failed_step_keys() == {"evaluate_partition"}
    (event,) = result.get_step_failure_events()
    error = event.step_failure_data.error
    suite_file = str(tmp_path / "skills" / "broken-suite" / "1.0.0" / "eval.yaml")
    assert f"{suite_file}:" in error.message
    assert "invalid YAML" in error.message and "Failure: eval_suite: " in error.message
    assert "Traceback" not in error.message
    assert error.cause is None  # raised `from None`: no chained parser traceback
    assert event.step_failure_data.user_failure_data is not None
    assert suite_file in event.step_failure_data.user_failure_data.description
    # Later stages never ran and nothing was written.
    assert not result.get_step_success_events()
    assert not result.get_asset_materialization_events()
    assert counts(db, "broken-suite@1.0.0") == dict.fromkeys(TABLES, 0)


def test_registered_version_without_a_package_fails_readably(tmp_path: Path,
                                                             instance: dg.DagsterInstance) -> None:
    make_project(tmp_path, "calculator/v1.0.0")
    result = execute(tmp_path, tmp_path / "results.duckdb", instance, "calculator@9.9.9")
    assert not result.success
    message = failure_messages(result)["evaluate_partition"]
    assert "'calculator@9.9.9' not found" in message and "Traceback" not in message


def test_a_stage_without_its_upstream_rows_says_what_to_run(tmp_path: Path,
                                                            instance: dg.DagsterInstance) -> None:
    make_project(tmp_path, "calculator/v1.0.0")
    instance.add_dynamic_partitions(skill_versions.name, [CALC])
    resources = {"project": EvalProject(root=str(tmp_path)),
                 "store": EvalStore(db_path=str(tmp_path / "results.duckdb")), "models": ModelAccess()}
    result = dg.materialize(ASSETS, selection=["test_cases"], partition_key=key(CALC), instance=instance,
                            resources=resources, raise_on_error=False, run_config=QUIET)
    assert not result.success
    message = failure_messages(result)["evaluate_partition"]
    assert "Failure: test_cases: " in message and "materialise eval_suite first" in message and "Traceback" not in message


# ---- regression report and its check --------------------------------------------


def test_a_version_that_breaks_passing_cases_fails_the_regression_check(tmp_path: Path, instance) -> None:
    root = make_project(tmp_path, "support-triage/1.0.0", "support-triage/2.0.0")
    db = tmp_path / "results.duckdb"
    assert execute(root, db, instance, "support-triage@1.0.0").success
    result = execute(root, db, instance, "support-triage@2.0.0")
    # The evaluation failed (gate and regression): the run fails after storing every stage's rows.
    # metrics and regression_report, whose checks failed, are observed, not materialised.
    assert not result.success and {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()} \
        == set(STAGE_NAMES) - {"metrics", "regression_report"} | {"skill_trends/support-triage"}
    (failure,) = result.get_step_failure_events()
    assert "no_significant_regression: previous_version" in failure.step_failure_data.user_failure_data.description
    (evaluation,) = [e for e in result.get_asset_check_evaluations()
                     if e.check_name == "no_significant_regression"]
    assert evaluation.passed is False
    assert "previous_version" in evaluation.description and "tech-crash" in evaluation.description
    comparisons = evaluation.metadata["comparisons"].value
    (versus,) = [c for c in comparisons if c["comparison"] == "previous_version"]
    assert versus["baseline"] == "support-triage@1.0.0 (2026-11-20)"
    assert versus["estimate"] == pytest.approx(-0.9) and versus["interval"][1] < 0
    assert versus["adjusted_p"] < 0.05 and "account-2fa" in versus["cases"]
    flips = dict(sql(db, "SELECT test_id, change FROM regressions WHERE level = 'case' "
                         "AND skill_version = 'support-triage@2.0.0'"))
    # One trial a side: a flip is reported as changed, never labelled regressed (Fisher p = 1/2).
    assert flips["tech-crash"] == "changed" and flips["billing-refund"] == "unchanged"
    assert versus["significant"] and versus["large_enough"] and versus["verdict"] == "regressed"
    # The run's Markdown report (eval_report asset) states the interval and the p-value.
    report = (root / "reports" / "2026-11-20" / "support-triage-2.0.0.md").read_text()
    assert "Statistical verdict (triage-script): -90.0 points, 95% interval [" in report
    assert "p = 0.00195" in report and "**regressed**" in report


def test_small_mixed_changes_do_not_cry_wolf(tmp_path: Path, instance) -> None:
    # calculator 1.1.0 breaks tc-002 and fixes tc-005: no significant drop.
    root = make_project(tmp_path, "calculator/v1.0.0", "calculator/v1.1.0")
    db = tmp_path / "results.duckdb"
    assert execute(root, db, instance, "calculator@1.0.0").success
    result = execute(root, db, instance, "calculator@1.1.0")
    checks_ = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks_["no_significant_regression"].passed is True
    flips = dict(sql(db, "SELECT test_id, change FROM regressions WHERE level = 'case' "
                         "AND skill_version = 'calculator@1.1.0'"))
    assert (flips["tc-002"], flips["tc-005"]) == ("changed", "changed")  # single trials: not labels
