"""``eval-pipelines`` validate / run / convert, in-process through ``main([...])``.

Exit codes: 0 success, 1 a gate failed, 2 invalid input; every expected problem
is one ``file:line: field.path: message`` line, never a traceback.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eval_pipelines.cli import EXIT_FAILED, EXIT_INVALID, EXIT_OK, main
from eval_pipelines.store.connection import TABLES, connect

PROJECT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dagster"
EXAMPLE_SKILLS = sorted(p.parent for p in (PROJECT / "skills").glob("*/*/SKILL.md"))
PROBLEM_LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): (?P<path>\S+): (?P<message>.+)$")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(PROJECT / "skills", root / "skills", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT / "datasets", root / "datasets")
    shutil.copy(PROJECT / "targets.yaml", root / "targets.yaml")
    return root


def rows(db: Path, query: str, params: list | None = None) -> list[tuple]:
    with connect(db) as con:
        return con.execute(query, params or []).fetchall()


# ---- validate -------------------------------------------------------------------------


def test_example_skills_are_found() -> None:
    names = {f"{p.parent.name}/{p.name}" for p in EXAMPLE_SKILLS}
    assert {"calculator/v1.0.0", "calculator/v1.1.0", "support-triage/1.0.0"} <= names


@pytest.mark.parametrize("skill", EXAMPLE_SKILLS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_validate_example_skill(capsys: pytest.CaptureFixture[str], skill: Path) -> None:
    code, out, err = cli(capsys, "--root", str(PROJECT), "validate", str(skill))
    assert code == EXIT_OK, out + err
    assert re.search(rf"^ok: {re.escape(str(skill))}: {skill.parent.name}@[^:]+: \d+ tests$", out, re.M), out


def test_validate_datasets(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in (PROJECT / "datasets").iterdir())
    code, out, err = cli(capsys, "--root", str(PROJECT), "validate", *files)
    assert code == EXIT_OK, out + err
    assert out.count("ok: ") == len(files) and " rows" in out


def test_validate_invalid_yaml_names_file_and_line(capsys: pytest.CaptureFixture[str]) -> None:
    suite = FIXTURES / "broken-suite" / "eval.yaml"
    code, out, err = cli(capsys, "validate", str(suite))
    assert code == EXIT_INVALID
    assert "Traceback" not in out + err
    (line,) = out.splitlines()
    match = PROBLEM_LINE.match(line)
    assert match, line
    assert match["file"] == str(suite) and int(match["line"]) >= 5
    assert match["path"] == "(root)" and match["message"].startswith("invalid YAML")


def test_validate_broken_skill_folder(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "validate", str(FIXTURES / "broken-suite"))
    assert code == EXIT_INVALID
    assert "Traceback" not in out + err
    assert PROBLEM_LINE.match(out.splitlines()[0])
    assert str(FIXTURES / "broken-suite" / "eval.yaml") in out


def test_validate_lists_every_field_problem(capsys: pytest.CaptureFixture[str]) -> None:
    suite = FIXTURES / "bad-fields.yaml"
    code, out, err = cli(capsys, "validate", str(suite))
    assert code == EXIT_INVALID
    assert "Traceback" not in out + err
    problems = [PROBLEM_LINE.match(line) for line in out.splitlines()]
    assert problems and all(problems), out
    by_path = {m["path"]: m for m in problems}
    assert by_path["tests[0].assert[0].type"]["line"] == "7"
    assert "did you mean 'contains'" in by_path["tests[0].assert[0].type"]["message"]
    assert by_path["tests[1].inptu"]["line"] == "10"
    assert "unknown field 'inptu'" in by_path["tests[1].inptu"]["message"]
    assert all(m["file"] == str(suite) for m in problems)


def test_validate_good_and_bad_together_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--root", str(PROJECT), "validate",
                       str(PROJECT / "skills" / "calculator" / "v1.0.0"), str(FIXTURES / "bad-fields.yaml"),
                       str(FIXTURES / "does-not-exist.yaml"))
    assert code == EXIT_INVALID
    assert "ok: " in out  # the good one is still reported
    (missing,) = [line for line in out.splitlines() if "does-not-exist" in line]
    assert missing.startswith(f"{FIXTURES / 'does-not-exist.yaml'}: (root): ")
    assert "no such file" in missing.lower()


# ---- run ------------------------------------------------------------------------------


@pytest.mark.slow  # runs the skill's script as a subprocess
def test_run_calculator_writes_rows(capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path) -> None:
    db = tmp_path / "out" / "results.duckdb"
    skill = project / "skills" / "calculator" / "v1.0.0"
    code, out, err = cli(capsys, "--root", str(project), "run", str(skill), "--db", str(db))
    assert code == EXIT_OK, out + err
    assert "5 passed / 1 failed / 0 errors / 0 not evaluated (pass rate 83%)" in out, out
    assert "FAIL tc-005: exact_match: Expected output " in out
    assert f"DuckDB: {db}" in out
    counts = {t: rows(db, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}
    assert counts["suites"] == 1
    assert counts["test_cases"] == counts["model_outputs"] == counts["grades"] == counts["test_results"] == 6
    assert counts["metrics"] > 0
    assert rows(db, "SELECT test_id FROM test_results WHERE verdict <> 'pass'") == [("tc-005",)]
    (run_id,) = rows(db, "SELECT DISTINCT run_id FROM model_outputs")
    assert run_id[0].startswith("cli-")

    # Running again replaces the partition instead of appending to it.
    code, _, _ = cli(capsys, "--root", str(project), "run", str(skill), "--db", str(db))
    assert code == EXIT_OK
    assert {t: rows(db, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES} == counts


@pytest.mark.slow  # runs the skill's script as a subprocess
@pytest.mark.parametrize(("version", "expected_code"), [("1.0.0", EXIT_OK), ("2.0.0", EXIT_FAILED)])
def test_run_exit_code_follows_the_gates(capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path,
                                         version: str, expected_code: int) -> None:
    db = tmp_path / "results.duckdb"
    code, out, err = cli(capsys, "--root", str(project), "run",
                         str(project / "skills" / "support-triage" / version), "--db", str(db))
    assert code == expected_code, out + err
    assert ("gate failed: required_pass_rate" in out) == (expected_code == EXIT_FAILED)
    assert rows(db, "SELECT count(*) FROM test_results WHERE skill_version = ?",
                [f"support-triage@{version}"]) == [(10,)]


def test_run_unknown_target_is_invalid_input(capsys: pytest.CaptureFixture[str], project: Path,
                                             tmp_path: Path) -> None:
    db = tmp_path / "results.duckdb"
    code, out, err = cli(capsys, "--root", str(project), "run", str(project / "skills" / "calculator" / "v1.0.0"),
                         "--target", "nope", "--db", str(db))
    assert code == EXIT_INVALID
    assert "--target: unknown target(s) ['nope']" in out
    assert "Traceback" not in out + err
    assert not db.exists()


def test_run_broken_suite_is_invalid_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "results.duckdb"
    code, out, err = cli(capsys, "--root", str(tmp_path), "run", str(FIXTURES / "broken-suite"), "--db", str(db))
    assert code == EXIT_INVALID
    assert PROBLEM_LINE.match(out.splitlines()[0]) and "invalid YAML" in out
    assert "Traceback" not in out + err
    assert not db.exists()


# ---- convert --------------------------------------------------------------------------


@pytest.mark.slow  # runs the skill's script as a subprocess
def test_convert_v1_tests_json_to_v2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    skill = tmp_path / "v1-calc"
    shutil.copytree(FIXTURES / "v1-skill", skill)

    # Before: the v1 file loads through an on-the-fly conversion, with a warning.
    code, out, err = cli(capsys, "validate", str(skill))
    assert code == EXIT_OK and "v1 tests.json converted to v2" in err

    code, out, err = cli(capsys, "convert", str(skill / "tests.json"))
    assert code == EXIT_OK, out + err
    written = skill / "eval" / "tests.json"
    assert out.splitlines() == [f"wrote {written}", f"remove {skill / 'tests.json'} once you have checked "
                                "tests.json: a skill package holds one suite file"]
    data = json.loads(written.read_text())
    assert data["version"] == "2.0" and data["profile"] == "deterministic"
    assert [c["id"] for c in data["testCases"]] == ["tc-001", "tc-002"]
    assert data["testCases"][0]["input"] == {"prompt": "Calculate 1 + 1"}
    assert data["testCases"][0]["expected"] == {"output": "2"}
    assert data["testCases"][0]["evaluation"] == {"strategy": "exact_match"}
    assert data["testCases"][1]["expected"] == {"patterns": ["^9$"]}
    assert data["testCases"][1]["evaluation"] == {"strategy": "regex_match", "timeout": 2000}

    # Both files in the package: two suites, refused naming both (issue 30) until the v1 one goes.
    code, out, err = cli(capsys, "validate", str(skill))
    assert code == EXIT_INVALID and "several suite files: eval/tests.json and tests.json" in out + err
    (skill / "tests.json").unlink()
    # After: the v2 file is the package's suite, no warning.
    code, out, err = cli(capsys, "validate", str(written), str(skill))
    assert code == EXIT_OK, out + err
    assert "skill-tests-v2: 2 tests" in out and "v1-calc@0.9.0: 2 tests" in out
    assert "converted" not in err

    # And it runs.
    db = tmp_path / "results.duckdb"
    code, out, err = cli(capsys, "--root", str(tmp_path), "run", str(skill), "--db", str(db))
    assert code == EXIT_OK, out + err
    assert rows(db, "SELECT test_id, verdict FROM test_results ORDER BY 1") == [("tc-001", "pass"),
                                                                               ("tc-002", "pass")]


def test_convert_with_out_and_refusing_v2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "elsewhere" / "converted.json"
    code, out, _ = cli(capsys, "convert", str(FIXTURES / "v1-skill" / "tests.json"), "--out", str(out_file))
    assert code == EXIT_OK and out_file.is_file()
    assert not (FIXTURES / "v1-skill" / "eval").exists()  # the fixture is left alone

    code, out, err = cli(capsys, "convert", str(out_file))
    assert code == EXIT_INVALID
    assert "not a v1 tests.json" in out and "Traceback" not in out + err

    code, out, err = cli(capsys, "convert", str(FIXTURES / "broken-suite" / "eval.yaml"))
    assert code == EXIT_INVALID
    assert PROBLEM_LINE.match(out.splitlines()[0]) and "Traceback" not in out + err


# ---- as a program ---------------------------------------------------------------------


@pytest.mark.slow
def test_cli_as_a_subprocess(tmp_path: Path) -> None:
    bad = subprocess.run([sys.executable, "-m", "eval_pipelines.cli", "validate",
                          str(FIXTURES / "bad-fields.yaml")],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert bad.returncode == EXIT_INVALID
    assert "Traceback" not in bad.stdout + bad.stderr
    assert all(PROBLEM_LINE.match(line) for line in bad.stdout.splitlines()), bad.stdout

    usage = subprocess.run([sys.executable, "-m", "eval_pipelines.cli", "frobnicate"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert usage.returncode == 2 and "Traceback" not in usage.stderr and "usage:" in usage.stderr


@pytest.mark.slow  # two CLI runs and two Dagster runs of support-triage
def test_cli_and_dagster_run_the_same_stages_into_the_same_rows(
        capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path) -> None:
    """`eval-pipelines run` of 1.0.0 then 2.0.0 fills every table the Dagster job fills, datasets and
    regressions included, with the same verdicts, and writes the same reports."""
    from datetime import date

    import dagster as dg

    from eval_pipelines.defs.partitions import partition_key_for, skill_versions
    from eval_pipelines.definitions import build_definitions
    from eval_pipelines.store.connection import TABLES

    cli_db, dagster_db = tmp_path / "cli.duckdb", tmp_path / "dagster.duckdb"
    codes = []
    for version in ("1.0.0", "2.0.0"):
        code, out, err = cli(capsys, "--root", str(project), "run",
                             str(project / "skills" / "support-triage" / version), "--db", str(cli_db))
        codes.append(code)
    assert codes == [EXIT_OK, EXIT_FAILED]
    assert "check no_significant_regression failed: previous_version" in out, out
    today = rows(cli_db, "SELECT max(eval_date) FROM suites")[0][0]
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(skill_versions.name, ["support-triage@1.0.0", "support-triage@2.0.0"])
        job = build_definitions(str(project), str(dagster_db)).resolve_job_def("evaluate_skill_version")
        results = [job.execute_in_process(
            partition_key=partition_key_for(f"support-triage@{v}", date.fromisoformat(today)),
            instance=instance, raise_on_error=False) for v in ("1.0.0", "2.0.0")]
    # In a failed run the checks with nothing to check (no trigger set, no run without the skill)
    # come as warnings: only the errors are failures.
    failed = {e.check_name for e in results[1].get_asset_check_evaluations()
              if not e.passed and e.severity == dg.AssetCheckSeverity.ERROR}
    assert failed == {"suite_thresholds_met", "no_significant_regression"}

    key = "support-triage@2.0.0"
    for table in TABLES:
        counted = [rows(db, f"SELECT count(*) FROM {table} WHERE skill_version = ?", [key])[0][0]
                   for db in (cli_db, dagster_db)]
        assert counted[0] == counted[1], (table, counted)
    assert rows(cli_db, "SELECT count(*) FROM datasets WHERE skill_version = ?", [key])[0][0] > 0
    assert rows(cli_db, "SELECT count(*) FROM regressions WHERE skill_version = ? AND level = 'case'",
                [key])[0][0] > 0
    verdicts = ("SELECT comparison, level, target, coalesce(test_id, ''), change FROM regressions "
                "WHERE skill_version = ? ORDER BY ALL")
    assert rows(cli_db, verdicts, [key]) == rows(dagster_db, verdicts, [key])
    results_sql = "SELECT test_id, target, trial, verdict, status, score FROM test_results WHERE skill_version = ? ORDER BY ALL"
    assert rows(cli_db, results_sql, [key]) == rows(dagster_db, results_sql, [key])
    assert sorted(p.name for p in (project / "reports" / today).iterdir()) == [
        "support-triage-1.0.0.html", "support-triage-1.0.0.json", "support-triage-1.0.0.md",
        "support-triage-2.0.0.html", "support-triage-2.0.0.json", "support-triage-2.0.0.md"]
