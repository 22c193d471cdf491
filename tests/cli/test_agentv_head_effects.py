"""AgentV HEAD fields of issue 18's last round, run end to end: ``eval-pipelines run`` on a small
project against the fake OpenAI server, the effect read back from DuckDB and the requests sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import EXIT_OK, main
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import Models, make_skill, sql


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[Models]:
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-agentv-head")
        yield Models(server)


def run(capsys: pytest.CaptureFixture[str], root: Path, skill: Path) -> tuple[int, str, Path]:
    db = root / "results.duckdb"
    capsys.readouterr()
    code = main(["--root", str(root), "run", str(skill), "--db", str(db)])
    out, err = capsys.readouterr()
    return code, out + err, db


VARS_SUITE = """\
description: Demonstrates tests[].vars templating in eval fields
input:
  - role: system
    content: "You are a concise assistant answering {{category}} questions."
tests:
  - id: capital-france
    vars:
      category: geography
      question: What is the capital of France?
      expected:
        answer: Paris
    criteria: "Answers {{question}} correctly"
    input: "Question: {{question}}"
    expected_output: "{{expected.answer}}"
    assert:
      - type: contains
        value: "{{expected.answer}}"
"""


def test_test_vars_shape_the_stored_case_and_the_request(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": VARS_SUITE})
    models.replies["Question: What is the capital of France?"] = "Paris."
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    ((criteria, expected, messages, assertions),) = sql(
        db, "SELECT criteria, expected, messages, assertions FROM test_cases")
    assert criteria == "Answers What is the capital of France? correctly"
    assert json.loads(expected) == "Paris"
    assert [(m["role"], m["content"]) for m in json.loads(messages)] == [
        ("system", "You are a concise assistant answering geography questions."),
        ("user", "Question: What is the capital of France?")]
    assert json.loads(assertions)[0]["config"]["value"] == "Paris"
    (request,) = models.chat_requests()
    assert request["messages"][-1]["content"] == "Question: What is the capital of France?"
    assert any("geography" in m["content"] for m in request["messages"])
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("contains", True)]


PREPROCESSED = """\
description: Convert file outputs to grader-readable text before llm grading
preprocessors:
  - type: xlsx
    command: ["bun", "run", "scripts/xlsx-to-csv.ts"]
tests:
  - id: spreadsheet-output
    input: Generate the spreadsheet report
    assert:
      - type: contains
        value: revenue
"""


def test_preprocessors_are_a_stored_warning_and_the_text_answer_is_graded_as_is(capsys, models: Models,
                                                                                  tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": PREPROCESSED, "scripts/xlsx-to-csv.ts": "// converts\n"})
    models.replies["Generate the spreadsheet report"] = "month,revenue\nJan,10"
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    (warnings,) = sql(db, "SELECT warnings FROM suites")[0]
    assert any("preprocessors (xlsx): accepted, never run" in w for w in json.loads(warnings))
    ((output,),) = sql(db, "SELECT output FROM model_outputs")
    assert output == "month,revenue\nJan,10"
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("contains", True)]


CONVERSATION = """\
description: Live multi-turn conversation evaluation with per-turn grading
tests:
  - id: stop-on-failure
    mode: conversation
    criteria: Agent follows instructions precisely
    input:
      - role: system
        content: You are a helpful assistant. Be precise and accurate.
    turns:
      - input: What is 2 + 2?
        assert:
          - type: contains
            value: "4"
      - input: Multiply that by 3.
        assert:
          - type: contains
            value: "12"
"""


def test_conversation_turns_are_sent_one_after_another_with_the_earlier_answers(capsys, models: Models,
                                                                                 tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": CONVERSATION})
    models.replies["What is 2 + 2?"] = "4"
    models.replies["Multiply that by 3."] = "12"
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    first, second = models.chat_requests()
    assert [m["content"] for m in first["messages"] if m["role"] != "system"][-1] == "What is 2 + 2?"
    # the second call carries the first turn and the answer the model gave it
    assert [(m["role"], m["content"]) for m in second["messages"] if m["role"] != "system"][-3:] == [
        ("user", "What is 2 + 2?"), ("assistant", "4"), ("user", "Multiply that by 3.")]
    assert sql(db, "SELECT test_id, output FROM model_outputs ORDER BY test_id") == [
        ("stop-on-failure.turn-1", "4"), ("stop-on-failure.turn-2", "12")]
    assert sql(db, "SELECT test_id, passed FROM grades ORDER BY test_id") == [
        ("stop-on-failure.turn-1", True), ("stop-on-failure.turn-2", True)]
    metadata = [json.loads(m) for (m,) in sql(db, "SELECT metadata FROM test_cases ORDER BY test_id")]
    assert [m["conversation"]["turn"] for m in metadata] == [1, 2]


AGENT_RULES = """\
name: tool-calls-template
description: Rubric assertions with {{ tool_calls }} for skill verification
extensions:
  - agentv:agent-rules
environment:
  type: host
  workdir: ./workspace/
prompts:
  - "{{ input }}"
tests:
  - id: deploy-skill-use
    assert:
      - type: contains
        value: trident
    vars:
      input: How do I deploy payments-api to production?
"""


def test_agent_rules_paths_are_stored_with_the_case_and_the_workspace_is_the_workdir(capsys, models: Models,
                                                                                     tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": AGENT_RULES,
                                  "workspace/.agents/skills/acme-deploy/SKILL.md": "# Acme deploy\n"})
    models.replies["How do I deploy payments-api to production?"] = "Run trident promote."
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    ((metadata,),) = sql(db, "SELECT metadata FROM test_cases")
    assert json.loads(metadata)["agent_rules_paths"] == {"skills": [".agents/skills"]}
    (warnings,) = sql(db, "SELECT warnings FROM suites")[0]
    assert any("agentv:agent-rules" in w and "not handed them" in w for w in json.loads(warnings))
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("contains", True)]


V5_CRITERIA = """\
prompts:
  - "{{ input }}"
tests:
  - id: templated
    vars:
      question: What is the capital of France?
      input: "Question: {{ vars.question }}"
    criteria: Answers {{question}} correctly
"""


def test_v5_criteria_are_stored_rendered_and_graded(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": V5_CRITERIA})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT criteria FROM test_cases") == [("Answers What is the capital of France? correctly",)]
    (request,) = models.chat_requests()
    assert request["messages"][-1]["content"] == "Question: What is the capital of France?"
    (judge,) = models.chat_requests(judge=True)
    assert "Answers What is the capital of France? correctly" in json.dumps(judge)
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("llm_judge", True)]
