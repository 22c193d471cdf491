"""The bundled Agent Skill (skills/report-builder) evaluated offline by the deterministic stand-ins:
an agent target whose model is a script (run/targets/agent/scripted.py) and a scripted judge
(grading/scripted_judge.py). The tools, the sandbox, the recording and the grading are real."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from eval_pipelines.cli import main
from eval_pipelines.grading.scripted_judge import JudgeScript, Rule, ScriptedJudge
from eval_pipelines.run.targets.agent.scripted import Script, load_script
from eval_pipelines.suite.errors import SpecErrors

SKILL = Path(__file__).resolve().parents[3] / "skills" / "report-builder" / "1.0.0"


@pytest.fixture(scope="module")
def run_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report-builder")
    package = root / "report-builder"
    shutil.copytree(SKILL, package)
    db = root / "db.duckdb"
    # with_skill only: what the skill's run stores (the baseline without it is tests/skill_creator/test_skill_uplift.py)
    assert main(["--root", str(root), "run", str(package), "--db", str(db), "--no-progress", "-q",
                 "--configurations", "with_skill"]) == 0  # no gates: exit 0
    return db


def test_files_transcript_and_metrics_are_stored(run_db: Path) -> None:
    con = duckdb.connect(str(run_db), read_only=True)
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT test_id, files, transcript, run_metrics, trace FROM model_outputs ORDER BY test_id").fetchall()}
    assert sorted(rows) == ["1", "2", "3"]
    files, transcript, metrics, trace = (json.loads(v) for v in rows["2"])
    report = next(f for f in files if f["path"] == "out/report.json")
    assert json.loads(report["text"])["total"] == 630 and len(report["sha256"]) == 64
    # the folder input was staged whole: the script read both of its files
    assert sorted(json.loads(report["text"])["inputs"]) == ["evals/files/regions/q1.csv", "evals/files/regions/q2.csv"]
    assert [t["tool"] for t in trace] == ["list_files", "read_file", "run_command", "read_file", "write_file"]
    # SKILL.md reached the model through read_file, never through the instructions
    instructions = " ".join(t.get("text", "") for t in transcript if t["kind"] == "instructions")
    assert "report-builder" in instructions and "Do not compute the figures yourself" not in instructions
    assert "Do not compute the figures yourself" in trace[1]["result"]
    assert metrics["turns"] == 6 and metrics["tool_calls_by_tool"]["run_command"] == 1
    # the gzipped (binary) input reached the workspace and the script
    files3 = json.loads(rows["3"][0])
    assert json.loads(next(f for f in files3 if f["path"] == "out/report.json")["text"])["total"] == 150


def test_each_expectation_has_its_verdict_and_evidence(run_db: Path) -> None:
    con = duckdb.connect(str(run_db), read_only=True)
    rows = con.execute("SELECT test_id, expectation_text, passed, evidence FROM expectation_results "
                       "ORDER BY test_id, expectation").fetchall()
    assert len(rows) == 9 and sum(r[2] for r in rows) == 8
    failed = [r for r in rows if not r[2]]
    assert failed == [("3", "out/summary.md names north as the largest region", False,
                       "the output does not hold 'Largest region: north'")]
    verdicts = dict(con.execute("SELECT test_id, verdict FROM test_results").fetchall())
    assert verdicts == {"1": "pass", "2": "pass", "3": "fail"}


def test_bad_scripts_are_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "agent-script.yaml"
    bad.write_text("cases:\n  '1':\n    - {tool: read_file, answer: both}\n")
    with pytest.raises(SpecErrors) as caught:
        load_script(bad)
    assert "agent-script.yaml" in str(caught.value) and "\n" not in str(caught.value.errors[0])
    with pytest.raises(ValueError):
        Rule(expectation="x")  # neither holds nor matches


def test_the_scripted_judge_answers_in_the_graders_format() -> None:
    judge = ScriptedJudge(JudgeScript(rules=[Rule(expectation="total", holds="total: 3")]))
    reply = asyncio.run(judge.complete_json("s", "the answer\ntotal: 3\n\n## Expectations\n1. gives the total\n2. other\n"))
    assert reply.data["expectations"][0]["passed"] is True and reply.data["expectations"][1]["passed"] is False
    assert Script(cases={"*": [{"answer": "x"}]}).steps_for("any")[0].answer == "x"
