"""Issue 32 items 3 and 4: evals.json expectations graded one by one, trials per eval, read back
from DuckDB after ``eval-pipelines run`` (the judge is the fake OpenAI server, scripted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import EXIT_INVALID, main
from eval_pipelines.reports.json_report import validate_report
from tests.skill_creator.support import is_judge, make_package, respond
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import sql


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(latency_s=0.0) as fake:
        fake.responder = respond
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-32")
        yield fake


def run(capsys: pytest.CaptureFixture[str], root: Path, skill: Path, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--root", str(root), "run", str(skill), "--db", str(root / "results.duckdb"), *extra])
    out, err = capsys.readouterr()
    return code, out + err


def test_each_expectation_is_stored_with_its_verdict_and_evidence(capsys, server, tmp_path: Path) -> None:
    skill = make_package(tmp_path)
    code, out = run(capsys, tmp_path, skill, "--configurations", "with_skill")  # no baseline run without the skill
    db = tmp_path / "results.duckdb"
    assert "Traceback" not in out

    # One judge call per case, all its expectations in it.
    judged = [r for r in server.requests if r and is_judge(r)]
    assert len(judged) == 2
    prompts = [r["messages"][-1]["content"] for r in judged]
    assert any("## Expectations\n1. MET gives a number\n2. Shows the sum 30\n3. Mentions both regions" in p
               for p in prompts)
    assert all('{"expectations": [{"text": "<the expectation>", "passed": true|false' in p for p in prompts)

    rows = sql(db, "SELECT test_id, target, trial, expectation, expectation_text, passed, evidence "
                   "FROM expectation_results ORDER BY test_id, expectation")
    assert rows == [
        ("1", "default", 0, 1, "MET names the south region", True, "found item 1 in the answer"),
        ("1", "default", 0, 2, "MET gives 20", True, "found item 2 in the answer"),
        ("2", "default", 0, 1, "MET gives a number", True, "found item 1 in the answer"),
        ("2", "default", 0, 2, "Shows the sum 30", False, "no sign of item 2"),
        ("2", "default", 0, 3, "Mentions both regions", False, "no sign of item 3"),
    ]
    assert sql(db, "SELECT DISTINCT skill_version, eval_date IS NOT NULL FROM expectation_results") == [
        ("csv-summary@1.0.0", True)]

    # A case passes when all its expectations pass; the expectation pass rate is passed / total.
    assert sql(db, "SELECT test_id, verdict, round(score, 4) FROM test_results ORDER BY test_id") == [
        ("1", "pass", 1.0), ("2", "fail", 0.3333)]
    metrics = dict(sql(db, "SELECT metric, value FROM metrics WHERE target = '*'"))
    assert metrics["pass_rate"] == 0.5
    assert metrics["expectation_pass_rate"] == 3 / 5
    assert (metrics["expectations_passed"], metrics["expectations_total"]) == (3, 5)

    # The reports name the unmet expectations with the judge's evidence, not expectation-2.
    reports = sorted((tmp_path / "reports").rglob("*"))
    markdown = next(p for p in reports if p.suffix == ".md").read_text()
    assert "Expectation not met: Shows the sum 30 (evidence: no sign of item 2)" in markdown
    assert "expectation-2" not in markdown
    assert "| expectation pass rate | 0.60 |" in markdown  # beside the case pass rate
    report = json.loads(next(p for p in reports if p.name == "csv-summary-1.0.0.json").read_text())
    validate_report(report)
    (failure,) = report["eval_report"]["failures"]
    assert failure["details"]["failed_expectations"] == [
        {"text": "Shows the sum 30", "evidence": "no sign of item 2"},
        {"text": "Mentions both regions", "evidence": "no sign of item 3"}]
    html = next(p for p in reports if p.suffix == ".html").read_text()
    assert "Mentions both regions" in html and "no sign of item 3" in html


def test_trials_come_from_the_flag_or_the_package_and_new_trials_are_not_cached(capsys, server,
                                                                                tmp_path: Path) -> None:
    skill = make_package(tmp_path, settings="trials: 2\nconfigurations: [with_skill]\n")
    run(capsys, tmp_path, skill)
    db = tmp_path / "results.duckdb"
    assert sql(db, "SELECT DISTINCT trial FROM model_outputs ORDER BY 1") == [(0,), (1,)]
    assert sql(db, "SELECT count(*) FROM expectation_results") == [(5 * 2,)]

    # --trials wins; the trials already run are answered from the cache, the new one is called.
    server.reset_counts()
    run(capsys, tmp_path, skill, "--trials", "3")
    assert sql(db, "SELECT trial, bool_and(cached) FROM model_outputs "
                   "WHERE eval_date = (SELECT max(eval_date) FROM model_outputs) GROUP BY 1 ORDER BY 1") == [
        (0, True), (1, True), (2, False)]
    assert len([r for r in server.requests if r and not is_judge(r)]) == 2  # trial 2 of both evals
    assert sql(db, "SELECT count(*) FROM expectation_results") == [(5 * 3,)]


@pytest.mark.parametrize("settings, message", [
    ("trails: 3\n", "did you mean 'trials'"),
    ("trials: 0\n", "runs per eval, an integer from 1 to 1000"),
    ("configurations: [without_skill]\n", "[with_skill, without_skill] (the default) or [with_skill]"),
])
def test_a_bad_package_setting_is_one_line(capsys, server, tmp_path: Path, settings: str, message: str) -> None:
    skill = make_package(tmp_path, settings=settings)
    code, out = run(capsys, tmp_path, skill)
    assert code == EXIT_INVALID and message in out and "eval-pipelines.yaml" in out and "Traceback" not in out


def test_the_trials_flag_refuses_a_non_number(capsys, tmp_path: Path) -> None:
    skill = make_package(tmp_path)
    with pytest.raises(SystemExit):
        main(["--root", str(tmp_path), "run", str(skill), "--trials", "many"])
    assert "expected an integer from 1 to 1000" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--root", str(tmp_path), "run", str(skill), "--configurations", "with_skil"])
    assert "expected with_skill,without_skill" in capsys.readouterr().err
