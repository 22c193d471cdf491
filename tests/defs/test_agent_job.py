"""An Agent Skill evaluated by an agent target through the Dagster job (issue 31): the
``new_skill_versions`` sensor finds the package and requests its partition; the job runs it
against the scripted agent (the fake OpenAI server); DuckDB holds the transcript, the files
written, the metrics, and the judge's request held the files' text."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import eval_partitions
from eval_pipelines.defs.resources import EvalProject, EvalStore
from eval_pipelines.defs.sensors import new_skill_versions
from tests.support.agent_skill import BODY_MARK, ScriptedAgent, make_agent_project, tool_messages
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import sql

pytestmark = pytest.mark.slow


def test_the_sensor_starts_an_agent_run_of_a_new_skill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    package = make_agent_project(tmp_path)
    # The agent with the skill (the without_skill baseline has its own Dagster test:
    # tests/defs/test_skill_uplift_job.py); the package's setting says so, as a user's would.
    (package / "eval-pipelines.yaml").write_text("configurations: [with_skill]\n", encoding="utf-8")
    db = tmp_path / "results.duckdb"
    with FakeOpenAIServer(latency_s=0.0) as server, dg.instance_for_test() as instance:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-SECRET-dagster")
        agent = ScriptedAgent(server)
        context = dg.build_sensor_context(instance=instance, resources={
            "project": EvalProject(root=str(tmp_path)), "store": EvalStore(db_path=str(db))})
        tick = new_skill_versions(context)
        assert isinstance(tick, dg.SensorResult)
        (request,) = tick.run_requests or []
        keys = eval_partitions.get_partition_key_from_str(str(request.partition_key)).keys_by_dimension
        assert keys["skill_version"] == "demo@1.0.0"
        for added in tick.dynamic_partitions_requests or []:
            instance.add_dynamic_partitions(added.partitions_def_name, list(added.partition_keys))
        job = build_definitions(str(tmp_path), str(db)).resolve_job_def("evaluate_skill_version")
        result = job.execute_in_process(
            partition_key=request.partition_key, instance=instance, raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
        assert result.success, [e.step_failure_data.error.message for e in result.get_step_failure_events()]

        requests = agent.agent_requests()
        assert BODY_MARK not in requests[0]["messages"][0]["content"]
        assert any(BODY_MARK in t for t in tool_messages(requests[2]))
        (judged,) = agent.judge_requests()
        assert '"count": 4' in judged["messages"][-1]["content"]

    ((files, transcript, metrics, skill_version),) = sql(
        db, "SELECT files, transcript, run_metrics, skill_version FROM model_outputs")
    assert skill_version == "demo@1.0.0"
    assert {f["path"] for f in json.loads(files)} == {"out/report.json", "out/notes.md"}
    assert any(i["kind"] == "tool_call" and i["tool"] == "run_command" for i in json.loads(transcript))
    assert json.loads(metrics)["tool_calls"] == 4
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("expectations", True)]
    # Through the Dagster job too (issue 32): one expectation_results row per expectation, and the
    # expectation pass rate beside the case pass rate.
    assert sql(db, "SELECT expectation, expectation_text, passed FROM expectation_results ORDER BY 1") == [
        (1, "out/report.json lists every input file", True), (2, "The skill's script was run", True)]
    assert sql(db, "SELECT value FROM metrics WHERE target = '*' AND metric = 'expectation_pass_rate'") == [(1.0,)]
