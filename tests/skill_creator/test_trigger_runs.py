"""Trigger evaluation (issue 32 item 5): a package's trigger set run by its agent target, the skill
offered among others by name and description only; rows in trigger_results, precision and recall in
the views, the ``skill_triggers`` check.

The planted run (9 of 10 should-trigger queries load the skill, 1 of 10 should-not)
goes through the Dagster job once (slow, one run per query: the decision is planted, so more runs change nothing but the time); the
fast tests run two queries twice through the stage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from eval_pipelines.pipeline import triggers
from eval_pipelines.pipeline.checks import skill_triggers
from eval_pipelines.pipeline.project import ProjectPaths
from eval_pipelines.run.targets.agent.triggering import skill_read_by
from eval_pipelines.formats.skills.trigger_settings import TriggerSettings, load_trigger_settings
from eval_pipelines.store.tables import StoredSuite
from eval_pipelines.suite.errors import SpecErrors
from tests.skill_creator.support import make_package
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.stages import run_suite
from tests.support.trigger_skill import LOADS, SHOULD, SHOULD_NOT, PlantedTriggers, make_trigger_project


def _stored(root: Path, skill: Path) -> StoredSuite:
    loaded = ProjectPaths.from_root(root).load(skill)
    return StoredSuite(loaded.suite, loaded.targets, loaded.package.root)


def test_a_skill_is_loaded_by_reading_its_skill_md_through_a_tool() -> None:
    assert skill_read_by("read_file", {"path": "skills/demo/SKILL.md"}) == "demo"
    assert skill_read_by("read_file", {"path": "./skills/demo/SKILL.md"}) == "demo"
    assert skill_read_by("run_command", {"command": "cat skills/pdf/SKILL.md | head"}) == "pdf"
    assert skill_read_by("read_file", {"path": "skills/demo/references/format.md"}) is None
    assert skill_read_by("list_files", {"path": "skills/demo"}) is None


def test_trigger_settings_are_checked_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "eval-pipelines.yaml").write_text("triggers:\n  runz: 3\n")
    with pytest.raises(SpecErrors) as caught:
        load_trigger_settings(tmp_path)
    assert len(caught.value.errors) == 1 and "runs" in str(caught.value) and ":2" in str(caught.value)
    (tmp_path / "eval-pipelines.yaml").write_text("triggers:\n  runs: 0\n")
    with pytest.raises(SpecErrors, match="triggers.runs"):
        load_trigger_settings(tmp_path)
    (tmp_path / "eval-pipelines.yaml").write_text("trials: 2\n")
    assert load_trigger_settings(tmp_path) == TriggerSettings()  # runs 3, threshold 0.5, min_accuracy 0.8


def test_a_chat_target_is_not_asked_and_naming_one_is_refused(tmp_path: Path) -> None:
    skill = make_package(tmp_path)  # chat targets only
    # A trigger file no agent will run is not even read: a shape we refuse does not fail a chat run.
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps({"should_trigger": ["q"]}))
    stored = _stored(tmp_path, skill)
    name, why = triggers.agent_target(stored, TriggerSettings())
    assert name is None and "default (openai)" in why and "needs an agent target" in why
    with pytest.raises(SpecErrors) as caught:
        triggers.agent_target(stored, TriggerSettings(target="default"))
    assert str(caught.value).count("\n") == 0 and "type openai" in str(caught.value)
    ctx = run_suite(stored, tmp_path, {"trigger_results"})
    assert ctx.rows("trigger_results").empty
    ctx.memo["suite"] = stored  # what the eval_suite stage would have stored
    outcome = skill_triggers(ctx)
    assert outcome.skipped


def test_two_queries_through_the_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = make_trigger_project(tmp_path, runs=2)
    queries = [{"query": SHOULD[0], "should_trigger": True}, {"query": SHOULD_NOT[5], "should_trigger": False}]
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps(queries))
    # A project skill beside it: offered too, by its name and description.
    other = tmp_path / "skills" / "calendar" / "2.0.0"
    other.mkdir(parents=True)
    other.joinpath("SKILL.md").write_text("---\nname: calendar\ndescription: Books meetings.\n---\nbody\n")
    (skill / "eval-pipelines.yaml").write_text("triggers:\n  runs: 2\n  distractors:\n"
                                               "    - {name: pdf-forms, description: Fills in PDF forms.}\n")
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        planted = PlantedTriggers(server)
        ctx = run_suite(_stored(tmp_path, skill), tmp_path, {"trigger_results"})
        first = planted.trigger_requests()[0]["messages"][0]["content"]
    # Name and description only: the body of SKILL.md reaches the model only through read_file.
    assert "- demo: Takes stock of input files" in first and "- calendar: Books meetings." in first
    assert "BODY-MARK" not in first
    con = duckdb.connect(ctx.paths.db_path, read_only=True)
    rows = con.execute("SELECT query_number, run, triggered, loaded_by, stopped, turns, offered FROM trigger_results "
                       "ORDER BY 1, 2").fetchall()
    assert [(q, r, t) for q, r, t, *_ in rows] == [(1, 0, True), (1, 1, True), (2, 0, False), (2, 1, False)]
    assert json.loads(rows[0][3]) == {"tool": "read_file", "args": {"path": "skills/demo/SKILL.md"}, "step": 1}
    assert rows[0][4] == "skill_read" and rows[0][5] == 1  # stopped right after the skill decision
    assert rows[2][3] is None and rows[2][4] is None
    assert sorted(json.loads(rows[0][6])) == ["calendar", "demo", "pdf-forms"]
    assert con.execute("SELECT trigger_rate, passed FROM trigger_rates ORDER BY query_number").fetchall() == \
        [(1.0, True), (0.0, True)]
    assert con.execute("SELECT precision, recall, accuracy FROM trigger_accuracy").fetchall() == [(1.0, 1.0, 1.0)]
    con.close()
    ctx.memo["suite"] = _stored(tmp_path, skill)
    outcome = skill_triggers(ctx)
    assert outcome.passed and not outcome.skipped and outcome.metadata["trigger_accuracy"] == 1.0


def test_the_check_fails_below_a_minimum() -> None:
    import pandas as pd

    rows = pd.DataFrame([
        {"target": "default", "source_file": "evals/t.json", "query_number": n, "query": q, "should_trigger": s,
         "triggered": t, "error": None, "threshold": 0.5}
        for n, (q, s, t) in enumerate([("a", True, True), ("b", True, False), ("c", False, True),
                                       ("d", False, False)], 1)])
    passed, text, meta = triggers.check_numbers(rows, TriggerSettings(min_accuracy=0.8, min_recall=0.5))
    assert passed is False and "accuracy 0.500 < 0.800" in text and "recall" not in text.split("(")[0]
    assert meta["trigger_precision"] == 0.5 and meta["trigger_recall"] == 0.5


@pytest.mark.slow
def test_planted_triggers_through_the_dagster_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dagster as dg

    from eval_pipelines.definitions import build_definitions
    from eval_pipelines.defs.partitions import skill_versions

    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    make_trigger_project(tmp_path, runs=1)  # one run per query: the agent loop costs ~0.1 s of CPU a run
    db = tmp_path / "results.duckdb"
    with FakeOpenAIServer(latency_s=0.0) as server, dg.instance_for_test() as instance:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        PlantedTriggers(server)
        instance.add_dynamic_partitions(skill_versions.name, ["demo@1.0.0"])
        job = build_definitions(str(tmp_path), str(db)).resolve_job_def("evaluate_skill_version")
        result = job.execute_in_process(
            partition_key=dg.MultiPartitionKey({"date": "2026-11-28", "skill_version": "demo@1.0.0"}),
            instance=instance, raise_on_error=False,
            asset_selection=[dg.AssetKey("eval_suite"), dg.AssetKey("trigger_results")],
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
        assert result.success, [e.step_failure_data.error.message for e in result.get_step_failure_events()]
        (check,) = [c for c in result.get_asset_check_evaluations() if c.check_name == "skill_triggers"]
    assert check.passed
    meta = {k: v.value for k, v in check.metadata.items()}
    assert meta["trigger_precision"] == pytest.approx(0.9) and meta["trigger_recall"] == pytest.approx(0.9)
    assert "accuracy 0.900" in meta["result"]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*), count(*) FILTER (WHERE triggered) FROM trigger_results").fetchone() \
            == (20, len(LOADS))
        assert con.execute("SELECT precision, recall, accuracy, true_positives, false_positives FROM "
                           "trigger_accuracy").fetchall() == [(0.9, 0.9, 0.9, 9, 1)]
        from eval_pipelines.reports.triggers import load_triggers, triggers_json

        block = triggers_json(load_triggers(con, "demo@1.0.0", "2026-11-28"))
    # The JSON report's block, valid against the report schema's own definition of it.
    import jsonschema

    from eval_pipelines.reports.json_report import report_schema

    jsonschema.validate(block, report_schema()["properties"]["eval_report"]["properties"]["triggers"])
    (target,) = block
    assert (target["precision"], target["recall"], target["queries"]) == (0.9, 0.9, 20)
    assert target["counts"] == {"true_positives": 9, "false_positives": 1, "false_negatives": 1, "true_negatives": 9}
    assert len(target["rows"]) == 20 and {r["should_trigger"] for r in target["rows"]} == {True, False}
