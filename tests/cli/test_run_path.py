"""``eval-pipelines run FILE`` on a bare suite file, with ``--junit`` and ``--summary``.

The suite talks to the fake OpenAI-compatible server over real HTTP through a
``targets.yaml`` beside the file; the JUnit XML is parsed back and its failures
must be exactly the cases the store says failed.
"""

from __future__ import annotations

import gc
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest

from eval_pipelines.cli import main
from eval_pipelines.pipeline import collector
from eval_pipelines.analysis.exit_codes import ExitCode, run_exit_code
from eval_pipelines.store.connection import connect
from tests.support.fake_openai import echo_responder

SUITE = """\
name: capitals-quiz
description: Answers name the capital.
execution:
  targets: [local]
thresholds:
  required_pass_rate: 0.9
tests:
  - id: france
    input: capital of France?
    assert: [{type: contains, value: Paris}]
  - id: spain
    input: capital of Spain?
    assert: [{type: contains, value: Madrid}]
  - id: italy
    input: capital of Italy?
    assert: [{type: contains, value: Rome}]
"""


def targets_yaml(base_url: str, name: str = "local") -> str:
    return (f"targets:\n  - name: {name}\n    type: openai\n    model: fake-model\n"
            f"    base_url: {base_url}\n    api_key_env: FAKE_KEY\n    max_retries: 0\n")


@pytest.fixture
def suite_dir(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: ANN001
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "quiz.yaml").write_text(SUITE)
    (folder / "targets.yaml").write_text(targets_yaml(fake_openai.base_url))
    fake_openai.answers.update({"capital of France?": "Paris.", "capital of Spain?": "Barcelona, I think.",
                                "capital of Italy?": "Rome"})
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    return folder


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def test_bare_suite_file_runs_and_writes_junit_and_summary(capsys: pytest.CaptureFixture[str], suite_dir: Path,
                                                           tmp_path: Path) -> None:
    db, junit, summary = tmp_path / "r.duckdb", tmp_path / "out" / "j.xml", tmp_path / "summary.md"
    code, out = run(capsys, "--root", str(tmp_path), "run", str(suite_dir / "quiz.yaml"), "--db", str(db),
                    "--junit", str(junit), "--summary", str(summary))
    assert code == ExitCode.GATE_FAILED, out
    assert "gate failed: required_pass_rate = 0.667 < 0.900" in out
    with connect(db) as con:
        keys = con.execute("SELECT DISTINCT skill_version FROM test_results").fetchall()
        failed_in_store = {r[0] for r in con.execute(
            "SELECT test_id FROM test_results WHERE verdict <> 'pass'").fetchall()}
    assert keys[0][0].startswith("capitals-quiz@h-") and len(keys) == 1
    assert failed_in_store == {"spain"}

    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "1"
    (suite,) = root.findall("testsuite")
    assert suite.get("name").endswith("[local]") and suite.get("errors") == "0"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"france", "spain", "italy"}
    assert {n for n, c in cases.items() if c.find("failure") is not None} == failed_in_store
    failure = cases["spain"].find("failure")
    assert "Madrid" in failure.get("message") and "trial 0" in failure.text
    props = {p.get("name"): p.get("value") for p in cases["spain"].iter("property")}
    assert props["score"] == "0" and props["trials"] == "1" and props["passed_trials"] == "0"
    assert {p.get("name"): p.get("value") for p in suite.find("properties")}["pass_rate"] == "0.666667"

    text = summary.read_text()
    assert text.startswith("## ❌ capitals-quiz@h-") and ": gate failed" in text.splitlines()[0]
    assert "| local | 3 | 3 | 2 | 1 | 0 | 0 | 66.7% |" in text
    assert "`spain` [local] trial 0: graded fail" in text
    assert "❌ `suite_thresholds_met`: required_pass_rate = 0.667 < 0.900" in text
    assert "⏭️ `no_significant_regression`: skipped: no baseline to compare with yet" in text


def test_every_case_an_error_is_its_own_exit_code_and_junit_errors(capsys: pytest.CaptureFixture[str],
                                                                    suite_dir: Path, tmp_path: Path,
                                                                    fake_openai) -> None:  # noqa: ANN001
    fake_openai.fault_rate, fake_openai.faults = 1.0, ["401"]
    db, junit = tmp_path / "r.duckdb", tmp_path / "j.xml"
    code, out = run(capsys, "run", str(suite_dir / "quiz.yaml"), "--db", str(db), "--junit", str(junit))
    assert code == ExitCode.ALL_ERRORS, out
    root = ET.parse(junit).getroot()
    assert root.get("errors") == "3" and root.get("failures") == "0"
    assert all(c.find("error") is not None for c in root.iter("testcase"))


def test_target_from_the_current_folder_and_flag(capsys: pytest.CaptureFixture[str], suite_dir: Path,
                                                 tmp_path: Path, fake_openai) -> None:  # noqa: ANN001
    # No targets.yaml beside the file: the one in the current folder defines `other`, chosen by --target.
    (suite_dir / "targets.yaml").unlink()
    (tmp_path / "targets.yaml").write_text(targets_yaml(fake_openai.base_url, name="other"))
    db = tmp_path / "r.duckdb"
    code, out = run(capsys, "run", str(suite_dir / "quiz.yaml"), "--db", str(db))
    assert code == ExitCode.INVALID_INPUT and "unknown target(s) ['local']" in out and "other" in out
    code, out = run(capsys, "run", str(suite_dir / "quiz.yaml"), "--db", str(db), "--target", "other")
    assert code == ExitCode.GATE_FAILED, out
    with connect(db) as con:
        assert con.execute("SELECT DISTINCT target FROM model_outputs").fetchall() == [("other",)]


def test_missing_path_is_invalid_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = run(capsys, "run", str(tmp_path / "nope.yaml"), "--db", str(tmp_path / "r.duckdb"))
    assert code == ExitCode.INVALID_INPUT and "no such file or folder" in out


@pytest.mark.parametrize(("failed", "outputs", "errors", "expected"), [
    ([], 3, 0, ExitCode.OK),
    (["no_significant_regression"], 3, 1, ExitCode.REGRESSION),
    (["suite_thresholds_met", "no_significant_regression"], 3, 0, ExitCode.GATE_FAILED),
    (["suite_thresholds_met"], 3, 3, ExitCode.ALL_ERRORS),
    ([], 0, 0, ExitCode.OK),
])
def test_exit_code_precedence(failed: list[str], outputs: int, errors: int, expected: ExitCode) -> None:
    assert run_exit_code(failed, outputs, errors) == expected


def test_run_opens_the_results_file_three_times_and_never_while_models_answer(
        capsys: pytest.CaptureFixture[str], suite_dir: Path, tmp_path: Path, fake_openai,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each open of a DuckDB file costs ~35 ms: the stages share one connection before the model
    phase and one after it (code-only grading keeps it), and the summary reads through one more.
    None is open while the models answer, so other runs can write meanwhile."""
    db = tmp_path / "r.duckdb"
    real_connect = duckdb.connect
    opened: list[str] = []
    monkeypatch.setattr(duckdb, "connect", lambda path, *a, **k: opened.append(str(path)) or real_connect(path, *a, **k))
    held_while_answering: list[bool] = []

    def probing_responder(body: dict) -> str:
        # In this process a read-only open fails while the run holds the file read-write.
        try:
            real_connect(str(db), read_only=True).close()
            held_while_answering.append(False)
        except duckdb.Error:
            held_while_answering.append(True)
        return echo_responder(body)

    fake_openai.answers.clear()
    monkeypatch.setattr(fake_openai, "responder", probing_responder)
    monkeypatch.setattr(collector, "_freezes_at_exit", False)  # whatever an earlier test's run registered
    code, out = run(capsys, "--root", str(tmp_path), "run", str(suite_dir / "quiz.yaml"), "--db", str(db), "--no-cache")
    assert code == ExitCode.GATE_FAILED, out  # the echoed questions name no capital
    assert held_while_answering == [False, False, False]
    assert opened == [str(db)] * 3
    # What the command froze out of the garbage collector's way is handed back to an in-process caller,
    # and the run registered the freeze for when the process exits (tests/test_collector.py).
    assert gc.get_freeze_count() == 0
    assert collector._freezes_at_exit
