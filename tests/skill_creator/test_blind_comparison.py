"""Blind comparison (issue 32 item 6): each output of this run and the baseline version's output of
the same case go to the judge as A and B in a seeded random order; the stored winner is unblinded
right whichever order was drawn. The judge is the fake OpenAI server: it picks the output that
holds GOOD, so the current version must win every comparison, as A or as B."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from eval_pipelines.grading.comparator import current_is_a, unblind
from eval_pipelines.pipeline.project import ProjectPaths
from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.store import tables
from eval_pipelines.store.connection import connect, replace_partitions
from eval_pipelines.store.partition import Partition
from tests.skill_creator.support import make_package
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.stages import run_suite

CURRENT = Partition("2026-11-22", "csv-summary@1.0.0")
BASELINE = Partition("2026-11-20", "csv-summary@0.9.0")
EVALS = {"skill_name": "csv-summary", "evals": [
    {"id": i, "prompt": f"Summarise file {i}.", "expectations": [f"MET names file {i}"]} for i in range(1, 9)]}


def judge(body: dict) -> str:
    user = body["messages"][-1]["content"]
    a, b = re.search(r"## Output A\n(.*)\n\n## Output B\n(.*)", user, re.S).groups()
    good = "A" if "GOOD" in a else "B"
    scores = {good: 9, "B" if good == "A" else "A": 3}
    return json.dumps({"winner": good, "reasoning": f"{good} is complete",
                       "rubric": {k: {"content_score": v / 2, "structure_score": v / 2, "overall_score": v}
                                  for k, v in scores.items()},
                       "output_quality": {k: {"score": v, "strengths": [], "weaknesses": []} for k, v in scores.items()}})


def _store_outputs(db: str, partition: Partition, text: str) -> None:
    outputs = [ModelOutput(str(i), "default", 0, f"{text} answer about file {i}") for i in range(1, 9)]
    with connect(db) as con:
        replace_partitions(con, partition, {"model_outputs": tables.encode_outputs(outputs, partition, "t", "csv")})


def test_unblinding_follows_the_draw() -> None:
    assert unblind("A", True) == "current" and unblind("B", True) == "baseline"
    assert unblind("A", False) == "baseline" and unblind("B", False) == "current" and unblind("TIE", False) == "tie"
    draws = {current_is_a(7, str(i), "default", 0) for i in range(20)}
    assert draws == {True, False}  # a fair coin per output
    assert current_is_a(7, "3", "default", 0) == current_is_a(7, "3", "default", 0)  # seeded: the same again


def test_the_current_version_wins_as_a_and_as_b(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = make_package(tmp_path, evals=EVALS)
    loaded = ProjectPaths.from_root(tmp_path).load(skill)
    stored = tables.StoredSuite(loaded.suite, loaded.targets, loaded.package.root)
    db = str(tmp_path / "stages.duckdb")
    _store_outputs(db, BASELINE, "weak")
    _store_outputs(db, CURRENT, "GOOD")
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        server.responder = judge
        run_suite(stored, tmp_path, {"blind_comparisons"}, partition=CURRENT)  # not asked for: no judge call
        assert server.request_count == 0
        run_suite(stored, tmp_path, {"blind_comparisons"}, partition=CURRENT, compare_blind="0.9.0")
        asked = [r["messages"][-1]["content"] for r in server.requests]
    assert len(asked) == 8 and not any("0.9.0" in t or "1.0.0" in t for t in asked)  # blind to the versions
    assert all("MET names file" in t for t in asked)  # the expectations go along
    with duckdb.connect(db, read_only=True) as con:
        rows = con.execute("SELECT test_id, a_is, winner_label, winner, current_score, baseline_score, seed, "
                           "baseline_skill_version, error FROM blind_comparisons ORDER BY test_id").fetchall()
    assert len(rows) == 8 and {r[1] for r in rows} == {"current", "baseline"}  # both orders were drawn
    for test_id, a_is, label, winner, mine, theirs, seed, baseline, error in rows:
        assert error is None and winner == "current" and (mine, theirs) == (9.0, 3.0)
        assert label == ("A" if a_is == "current" else "B")
        assert a_is == ("current" if current_is_a(0, test_id, "default", 0) else "baseline")
        assert seed == f"0:{test_id}:default:0" and baseline == "csv-summary@0.9.0"
    # Reported: the Markdown section and the terminal line read the stored rows.
    from eval_pipelines.reports.blind import blind_line, blind_markdown, load_blind
    from eval_pipelines.reports.html.blind import blind_section
    from eval_pipelines.reports.markdown import cell

    with duckdb.connect(db, read_only=True) as con:
        summaries = load_blind(con, CURRENT.skill_version, CURRENT.eval_date)
    assert blind_line(summaries) == ("Blind comparison against csv-summary@0.9.0 (2026-11-20): this version "
                                     "preferred 8, the baseline 0, ties 0 of 8 outputs")
    assert "### Blind comparison" in blind_markdown(summaries, cell)
    assert 'id="blind"' in blind_section(summaries)
    # The JSON report's block, valid against the report schema's own definition of it.
    import jsonschema

    from eval_pipelines.reports.blind import blind_json
    from eval_pipelines.reports.json_report import report_schema

    block = blind_json(summaries)
    assert block == [{"baseline": "csv-summary@0.9.0 (2026-11-20)", "current_wins": 8, "baseline_wins": 0,
                      "ties": 0, "errors": 0, "lost": [], "compared": 8}]
    schema = report_schema()["properties"]["eval_report"]["properties"]["blind_comparisons"]
    jsonschema.validate(block, schema)
    jsonschema.validate(blind_json([]), schema)  # none asked for: null


def test_the_switch_on_the_command_line() -> None:
    from eval_pipelines.cli.app import build_parser

    args = build_parser().parse_args(["run", "skills/x", "--compare-blind", "previous"])
    assert args.compare_blind == "previous"


def test_a_blind_comparison_without_a_model_judge_is_refused_before_any_model_call(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eval_pipelines.cli.app import main

    skill = make_package(tmp_path, evals=EVALS)
    (tmp_path / "targets.yaml").write_text("targets:\n  - {name: default, type: command, command: [cat]}\n")
    code = main(["run", str(skill), "--root", str(tmp_path), "--db", str(tmp_path / "x.duckdb"),
                 "--compare-blind", "previous", "--no-progress"])
    assert code != 0 and not (tmp_path / "x.duckdb").exists()  # refused at load: no model was called
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert "compare_blind: blind comparison needs the suite's judge to be an OpenAI-compatible model" in line
