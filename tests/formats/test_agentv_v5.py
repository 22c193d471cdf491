"""AgentV v5 suites (promptfoo's shape with AgentV's names) loaded into the internal model."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.grading.registry import get_grader
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_skill, load_suite
from eval_pipelines.store.connection import connect
from eval_pipelines.store.tables import StoredSuite
from tests.support.stages import run_suite

HEAD = """\
name: demo
description: A v5 suite
version: "2.0"
tags: [a, b]
target: llm
prompts:
  - "{{ input }}"
"""


def load(tmp_path: Path, body: str, files: dict[str, str] | None = None):
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    path = tmp_path / "suite.yaml"
    path.write_text(HEAD + body)
    return load_suite(path)


def error_of(tmp_path: Path, body: str) -> str:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, body)
    assert "Traceback" not in str(caught.value)
    return str(caught.value).splitlines()[0]


def test_messages_in_vars_strings_as_rubrics_and_suite_assertions(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
assert:
  - Is polite
tests:
  - id: greet
    expected_output:
      - role: assistant
        content: Hello!
    assert:
      - metric: says-hello
        type: contains
        value: Hello
        required: true
      - type: is-json
        min_score: 0.5
      - Greets the user
    vars:
      input:
        - role: system
          content: Be brief.
        - role: user
          content:
            - type: text
              value: Say hello
            - type: file
              value: notes.md
  - id: solo
    execution: {skip_defaults: true}
    assert: [Answers]
    vars: {input: 'What is 2+2?'}
""", {"notes.md": "(attached notes)"})
    assert suite.format == "agentv-v5" and suite.name == "demo" and suite.version == "2.0"
    assert suite.tags == ["a", "b"] and suite.execution.targets == ["llm"]
    greet, solo = suite.tests
    assert [(m.role, m.content) for m in greet.input] == [("system", "Be brief."),
                                                          ("user", "Say hello\n(attached notes)")]
    assert greet.expected_output == "Hello!"
    assert [(a.type, a.name, a.required) for a in greet.assertions] == [
        ("llm_judge", None, False), ("contains", "says-hello", True), ("is_json", None, 0.5),
        ("llm_judge", None, False)]
    assert greet.assertions[0].config["rubric"] == "Is polite" and greet.assertions[3].config["rubric"] == \
        "Greets the user"
    assert [a.config["rubric"] for a in solo.assertions] == ["Answers"]  # skip_defaults: no suite assertion
    assert solo.input[0].content == "What is 2+2?"


def test_script_trajectory_and_skill_assertions(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
tests:
  - id: agent
    assert:
      - metric: grader
        type: script
        command: [python3, check.py]
        cwd: .
        expected_keywords: [a, b]
      - type: trajectory:tool-used
        value: {name: search, min: 1}
      - type: trajectory:tool-sequence
        value: {mode: exact, steps: [search, answer]}
      - type: trajectory:tool-args-match
        value: {name: search, args: {q: cats}, mode: exact}
      - type: not-trajectory:tool-used
        value: [delete_all]
      - type: skill-used
        value: pdf
    vars: {input: go}
""")
    got = [(a.type, a.negate, a.config) for a in suite.tests[0].assertions]
    assert got == [
        ("code_judge", False, {"command": ["python3", "check.py"], "config": {"expected_keywords": ["a", "b"]}}),
        ("tool_trajectory", False, {"mode": "any_order", "expected": [{"tool": "search"}]}),
        ("tool_trajectory", False, {"mode": "exact", "expected": [{"tool": "search"}, {"tool": "answer"}]}),
        ("tool_trajectory", False, {"mode": "any_order", "args_match": "exact",
                                    "expected": [{"tool": "search", "args": {"q": "cats"}}]}),
        ("tool_trajectory", True, {"mode": "any_order", "expected": [{"tool": "delete_all"}]}),
        ("tool_trajectory", False, {"mode": "any_order", "expected": [{"tool": "Skill", "args": {"skill": "pdf"}}]}),
    ]
    assert suite.tests[0].assertions[0].name == "grader"


def test_default_test_evaluate_options_environment_and_case_folders(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
environment: {type: host, workdir: ./template}
default_test:
  assert: [{type: contains, value: ok}]
evaluate_options: {repeat: 2, max_concurrency: 3}
tests: ./cases/
""", {"cases/a.yaml": "- id: one\n  vars: {input: first}\n", "cases/b/c.yaml": "id: two\nvars: {input: second}\n"})
    assert [c.id for c in suite.tests] == ["one", "two"]
    assert all(c.assertions[0].config["value"] == "ok" for c in suite.tests)
    assert suite.execution.trials.count == 2 and suite.settings.max_concurrency == 3
    assert suite.workspace is not None and suite.workspace.template == "./template"


@pytest.mark.parametrize(("body", "needle"), [
    ("extensions: [file://hooks.ts:beforeEach]\ntests: [{id: a, vars: {input: x}}]\n", "extensions"),
    ("environment: {type: docker, image: x}\ntests: [{id: a, vars: {input: x}}]\n", "environment"),
    ("tests: [{id: a, input: hello}]\n", "tests[].input` was removed"),
    ("tests: [{id: a, vars: {input: x}, assert: [{type: script, command: [x], cwd: ../elsewhere}]}]\n", "cwd"),
    ("tests: [{id: a, vars: {input: x}, assert: [{type: trajectory:tool-sequence, value: {mode: sideways}}]}]\n",
     "value.mode"),
])
def test_unsupported_v5_features_fail_in_one_line(tmp_path: Path, body: str, needle: str) -> None:
    line = error_of(tmp_path, body)
    assert needle in line and "suite.yaml" in line


@pytest.mark.skipif(get_grader("icontains_any") is None or get_grader("icontains_all") is None,
                    reason="grader added by issue 17")
def test_icontains_any_and_all_map_to_issue_17s_graders(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, "tests: [{id: a, vars: {input: x}, assert: [{type: icontains-any, value: [A, b]}, "
                              "{type: icontains-all, value: 'c, D'}]}]\n")
    assert [(a.type, a.config["value"]) for a in suite.tests[0].assertions] == [
        ("icontains_any", ["A", "b"]), ("icontains_all", ["c", "D"])]


def test_a_v5_suite_runs_through_the_stages_with_agentvs_scoring(tmp_path: Path) -> None:
    """AgentV scores by seed 001's rule (its own): gates, weighted mean, pass 0.8, borderline 0.6."""
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: echo-skill\ndescription: Echoes.\nversion: 1.0.0\n---\n")
    (skill / "targets.yaml").write_text("targets:\n  - {name: echo, type: command, command: [cat]}\n")
    (skill / "suite.yaml").write_text(HEAD.replace("target: llm", "target: echo") + """
tests:
  - id: greet
    assert: [{type: contains, value: Hello}, {type: regex, value: "^Hello"}]
    vars: {input: Hello world}
  - id: json
    assert: [{type: is-json, required: true}, {type: contains, value: not}]
    vars: {input: not json}
  - id: mixed
    assert:
      - {type: contains, value: alpha}
      - {type: contains, value: beta}
      - {type: contains, value: gamma}
      - {type: icontains, value: ALPHA}
    vars: {input: alpha beta}
""")
    loaded = load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "work", project_targets={})
    run_suite(StoredSuite(loaded.suite, loaded.targets, loaded.package.root), tmp_path,
              {"model_outputs", "grades", "test_results", "metrics"}, use_cache=False)
    with connect(tmp_path / "stages.duckdb") as con:
        rows = con.execute("SELECT test_id, verdict, score FROM test_results ORDER BY test_id").fetchall()
    assert [(t, v, round(s, 2)) for t, v, s in rows] == [
        ("greet", "pass", 1.0), ("json", "fail", 0.0), ("mixed", "borderline", 0.75)]
