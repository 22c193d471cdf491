"""Issue 30: verdicts that cannot hide a failure, through ``eval-pipelines run``.

Each test builds a small project (tests/support/field_projects.py), runs the CLI and
reads the effect back from DuckDB, or shows the one-line refusal of ``validate``.
The gate and score items run through the Dagster job too
(tests/defs/test_issue30_dagster.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import EXIT_INVALID, EXIT_OK, main
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import Models, make_skill, sql, suite_json
from tests.support.issue30_projects import (
    GATED, HARNESS_TAGS, HAT_SPELLED, MODEL_GRADED, MODEL_REPLIES, RUBRIC_CASES, RUBRIC_REPLY, TAGGED_CASES,
    judge_by_input,
)

EXIT_GATE_FAILED = 1


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[Models]:
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-issue30")
        yield Models(server)


def run(capsys: pytest.CaptureFixture[str], root: Path, skill: Path, *extra: str) -> tuple[int, str, Path]:
    db = root / "results.duckdb"
    capsys.readouterr()
    code = main(["--root", str(root), "run", str(skill), "--db", str(db), *extra])
    out, err = capsys.readouterr()
    return code, out + err, db


def validate(capsys: pytest.CaptureFixture[str], root: Path, skill: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--root", str(root), "validate", str(skill)])
    out, err = capsys.readouterr()
    return code, out + err


def overall(db: Path) -> dict[str, float]:
    return dict(sql(db, "SELECT metric, value FROM metrics WHERE target = '*'"))


# ---- 1. a failed measured gate fails the case, whatever else is unmeasured --------------------


def test_failed_required_gate_fails_the_case_beside_an_unmeasured_gate(capsys, models: Models,
                                                                      tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": GATED})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_GATE_FAILED, out  # pass rate 0.5 < required_pass_rate 0.8
    assert sql(db, "SELECT test_id, status, verdict, score FROM test_results ORDER BY 1") == [
        ("fine", "graded", "pass", 1.0), ("gated", "graded", "fail", 0.0)]
    (reason,) = sql(db, "SELECT reason FROM test_results WHERE test_id = 'gated'")[0]
    assert reason.startswith("required gate contains scored 0.00 < 0.80")
    assert sql(db, "SELECT assertion_type, status FROM grades WHERE test_id = 'gated' ORDER BY 1") == [
        ("contains", "graded"), ("cost", "not_evaluated")]
    assert overall(db)["pass_rate"] == 0.5


# ---- 2. a string is one tag ------------------------------------------------------------------


def test_a_string_tag_is_one_tag_in_tests_json_and_harness(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "json", {"eval/tests.json": suite_json(testCases=TAGGED_CASES)})
    code, out, db = run(capsys, tmp_path / "json", skill)
    assert code == EXIT_OK, out
    assert [(t, json.loads(tags)) for t, tags in sql(db, "SELECT test_id, tags FROM test_cases ORDER BY 1")] == [
        ("tc-001", ["edge"]), ("tc-002", ["edge"]), ("tc-003", ["a", "b"])]

    skill = make_skill(tmp_path / "harness", {"eval.yaml": HARNESS_TAGS})
    code, out, db = run(capsys, tmp_path / "harness", skill)
    assert code == EXIT_OK, out
    assert [json.loads(t) for (t,) in sql(db, "SELECT tags FROM test_cases")] == [["edge"]]


# ---- 3. `pass^3` runs three trials, as `pass_hat_3` does -------------------------------------


@pytest.mark.parametrize("spelling", ["pass^3", "pass_hat_3", "pass@3"])
def test_every_documented_k_spelling_runs_k_trials(capsys, models: Models, tmp_path: Path, spelling: str) -> None:
    for layout, text in HAT_SPELLED.items():
        root = tmp_path / layout
        skill = make_skill(root, {"eval.yaml": text.replace("SPELLING", spelling)})
        code, out, db = run(capsys, root, skill)
        assert code == EXIT_OK, (layout, out)
        assert sql(db, "SELECT count(*) FROM model_outputs") == [(3,)], layout
        canonical = spelling.replace("^", "_hat_").replace("@", "_at_")
        assert json.loads(sql(db, "SELECT thresholds FROM suites")[0][0])[canonical] == 0.5, layout
        assert overall(db)[canonical] == 1.0, layout


def test_fewer_trials_than_a_pass_hat_gate_is_refused_at_validate(capsys, tmp_path: Path) -> None:
    text = HAT_SPELLED["eval-yaml"].replace("SPELLING", "pass^3").replace("tests:", "execution: {trials: 2}\ntests:")
    skill = make_skill(tmp_path, {"eval.yaml": text})
    code, out = validate(capsys, tmp_path, skill)
    assert code == EXIT_INVALID
    (line,) = [x for x in out.splitlines() if "execution.trials" in x]
    assert "eval.yaml" in line and "2 trial(s) cannot compute a k=3 gate" in line


# ---- 13. profile required, rubric weights warned, one "did you mean" line -------------------


def test_missing_profile_is_refused_at_validate_in_one_line(capsys, tmp_path: Path) -> None:
    data = json.loads(suite_json())
    del data["profile"]
    skill = make_skill(tmp_path, {"eval/tests.json": json.dumps(data, indent=2)})
    code, out = validate(capsys, tmp_path, skill)
    assert code == EXIT_INVALID
    (line,) = [x for x in out.splitlines() if "profile" in x]
    assert "tests.json:1: profile: required field is missing" in line
    assert "one of deterministic, structured, flexible, creative, enterprise" in line
    # A v1 tests.json has no profile in its format: it still loads (converted with `deterministic`).
    v1 = json.dumps({"tests": [{"name": "a", "input": "alpha", "expectedOutput": "alpha"}]})
    other = make_skill(tmp_path / "v1", {"eval/tests.json": v1})
    code, out = validate(capsys, tmp_path / "v1", other)
    assert code == EXIT_OK, out


def test_rubric_weights_that_do_not_sum_to_one_are_a_stored_warning(capsys, models: Models,
                                                                   tmp_path: Path) -> None:
    rubric = {"criteria": [
        {"name": "accuracy", "description": "correct", "weight": 0.6, "scale": {"min": 1, "max": 5}},
        {"name": "tone", "description": "polite", "weight": 0.6, "scale": {"min": 1, "max": 5}}],
        "passingThreshold": 0.7}
    cases = [{"id": "judged", "name": "judged", "input": {"prompt": "alpha"},
              "expected": {"rubric": rubric}, "evaluation": {"strategy": "llm_judge"}}]
    skill = make_skill(tmp_path, {"eval/tests.json": suite_json(profile="creative", testCases=cases)})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    warnings = json.loads(sql(db, "SELECT warnings FROM suites")[0][0])
    (warning,) = [w for w in warnings if "weights sum to" in w]
    assert "tests.json:" in warning and "testCases[0].expected.rubric.criteria: weights sum to 1.2, not 1" in warning


def test_unknown_assertion_type_is_one_did_you_mean_line(capsys, tmp_path: Path) -> None:
    suite = "tests:\n  - {id: a, input: x, assert: [{type: containz, value: x}]}\n" \
            "  - {id: b, input: y, assert: [{type: containz, value: y}]}\n"
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    code, out = validate(capsys, tmp_path, skill)
    assert code == EXIT_INVALID
    lines = [x for x in out.splitlines() if "containz" in x]
    assert len(lines) == 2  # one line per place it is written, each a single suggestion
    assert all(x.endswith("unknown assertion type 'containz'; did you mean 'contains'?") for x in lines)
    assert "llm_judge" not in out and "tool_trajectory" not in out  # not the list of every type


# ---- 4. seed 003 `model` grader: the judge's `passed`, 4 of 5 passes ---------------------------


def test_model_grader_honours_the_judge_and_passes_four_of_five(capsys, models: Models, tmp_path: Path) -> None:
    models.server.responder = judge_by_input(MODEL_REPLIES)
    skill = make_skill(tmp_path, {"eval.yaml": MODEL_GRADED})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    rows = sql(db, "SELECT test_id, score, passed, calibrated_score, json_extract_string(details, '$.judge_passed'), "
                   "json_extract_string(details, '$.decided_by') FROM grades ORDER BY test_id")
    by_case = {r[0]: r[1:] for r in rows}
    # the score is the judge's 4 of 5 (0.75) everywhere; the verdict is the judge's, else the mark 4 of 5
    assert {t: s for t, (s, *_) in by_case.items()} == {
        "good": 0.75, "judge-says-no": 0.75, "no-verdict": 0.75, "own-mark": 0.75}
    assert by_case["good"][1:] == (True, 0.8, "true", "judge")
    assert by_case["judge-says-no"][1] is False and by_case["judge-says-no"][2] < 0.8
    assert by_case["judge-says-no"][3:] == ("false", "judge")
    assert by_case["no-verdict"][1:] == (True, 0.8, None, "threshold")  # 4 of 5 reaches the 0.75 mark
    assert by_case["own-mark"][1] is False and by_case["own-mark"][3:] == ("true", "threshold")  # 0.9 wins
    assert sql(db, "SELECT test_id, verdict, score FROM test_results ORDER BY 1") == [
        ("good", "pass", 0.75), ("judge-says-no", "borderline", 0.75), ("no-verdict", "pass", 0.75),
        ("own-mark", "borderline", 0.75)]  # not passes: seed 001's band for a score >= 0.6
    assert overall(db)["pass_rate"] == 0.5


# ---- 5. the stored score is the grader's; the calibrated one is its own column ----------------


def test_judge_score_is_stored_raw_and_mean_score_averages_raw(capsys, models: Models, tmp_path: Path) -> None:
    models.server.responder = judge_by_input({"write slides": RUBRIC_REPLY})
    skill = make_skill(tmp_path, {"eval/tests.json": suite_json(profile="creative", testCases=RUBRIC_CASES)})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    ((score, calibrated, passed),) = sql(db, "SELECT score, calibrated_score, passed FROM grades "
                                             "WHERE assertion_type = 'llm_judge'")
    assert score == pytest.approx(0.625) and calibrated == pytest.approx(0.8125) and passed
    assert sql(db, "SELECT calibrated_score FROM grades WHERE assertion_type = 'equals'") == [(None,)]
    results = {t: (s, v) for t, s, v in sql(db, "SELECT test_id, score, verdict FROM test_results")}
    assert results["judged"][0] == pytest.approx(0.625) and results["judged"][1] == "pass"  # passingThreshold 0.6
    assert overall(db)["mean_score"] == pytest.approx((0.625 + 1.0) / 2)
    (reason,) = sql(db, "SELECT reason FROM test_results WHERE test_id = 'judged'")[0]
    assert "verdict on the calibrated score 0.81" in reason
