"""AgentV HEAD's later vocabulary (formats/agentv/head.py) on both of HEAD's suite shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite

GOVERNANCE = """\
governance: &gov
  schema_version: "1.0"
  owasp_llm_top_10_2025: [LLM01]
  mitre_atlas: [AML.T0051]
  risk_tier: high
  owner: security-team
"""


def _write(tmp_path: Path, text: str, name: str = "suite.eval.yaml") -> Path:
    file = tmp_path / name
    file.write_text(text, encoding="utf-8")
    return file


@pytest.mark.parametrize("shape", ["tests+input", "prompts+vars"])
def test_suite_governance_is_merged_into_every_case(tmp_path: Path, shape: str) -> None:
    # AgentV's governance reference: lists are concatenated without duplicates, a case's scalar wins.
    if shape == "tests+input":
        cases = """\
tests:
  - id: plain
    input: hello
    assert: [{type: contains, value: hi}]
  - id: extended
    input: hello
    metadata:
      governance:
        <<: *gov
        owasp_llm_top_10_2025: [LLM01, LLM06]
        risk_tier: limited
    assert: [{type: contains, value: hi}]
"""
    else:
        cases = """\
prompts: ["{{ input }}"]
tests:
  - id: plain
    vars: {input: hello}
    assert: [{type: contains, value: hi}]
  - id: extended
    vars: {input: hello}
    metadata:
      governance:
        <<: *gov
        owasp_llm_top_10_2025: [LLM01, LLM06]
        risk_tier: limited
    assert: [{type: contains, value: hi}]
"""
    suite, _ = load_suite(_write(tmp_path, "name: gov\ndescription: d\ntarget: llm\n" + GOVERNANCE + cases))
    by_id = {t.id: t.metadata["governance"] for t in suite.tests}
    assert by_id["plain"] == {"schema_version": "1.0", "owasp_llm_top_10_2025": ["LLM01"],
                              "mitre_atlas": ["AML.T0051"], "risk_tier": "high", "owner": "security-team"}
    assert by_id["extended"]["owasp_llm_top_10_2025"] == ["LLM01", "LLM06"]
    assert by_id["extended"]["risk_tier"] == "limited" and by_id["extended"]["owner"] == "security-team"


def test_governance_that_is_not_a_mapping_is_refused_in_one_line(tmp_path: Path) -> None:
    for body in ("tests:\n  - id: a\n    input: hi\n    assert: [{type: contains, value: hi}]\n",
                 "prompts: ['{{ input }}']\ntests:\n  - id: a\n    vars: {input: hi}\n"):
        with pytest.raises(SpecErrors) as caught:
            load_suite(_write(tmp_path, "name: g\ndescription: d\ntarget: llm\ngovernance: [LLM01]\n" + body))
        message = str(caught.value.errors[0])
        assert "governance" in message and "\n" not in message and ":4:" in message


def test_later_grader_names_in_the_tests_input_shape(tmp_path: Path) -> None:
    (tmp_path / "refusal.md").write_text("Grade {output}", encoding="utf-8")
    suite, _ = load_suite(_write(tmp_path, """\
name: head
description: d
target: llm
tests:
  - id: a
    input: hello
    assertions:
      - type: llm-grader
        prompt: ./refusal.md
      - type: llm-rubric
        prompt: file://./refusal.md
      - name: gate
        type: code-grader
        command: [python3, check.py]
      - metric: words
        type: rubrics
        criteria: Says hello
      - Mentions the user by name
"""))
    kinds = [(a.type, a.name, a.config) for a in suite.tests[0].assertions]
    assert kinds[0][0] == "llm_judge" and kinds[0][2]["prompt"] == "./refusal.md"
    assert kinds[1][0] == "llm_judge" and kinds[1][2]["prompt"] == "./refusal.md"
    assert kinds[2][:2] == ("code_judge", "gate") and kinds[2][2]["command"] == ["python3", "check.py"]
    assert kinds[3][:2] == ("rubrics", "words")
    assert kinds[4][0] == "llm_judge" and kinds[4][2]["rubric"] == "Mentions the user by name"


def test_skill_trigger_checks_the_skill_tool_call_and_negates_when_it_should_not_trigger(tmp_path: Path) -> None:
    suite, _ = load_suite(_write(tmp_path, """\
target: default
tests:
  - id: triggers
    input: deploy it
    assertions: [{type: skill-trigger, skill: acme-deploy, should_trigger: true}]
  - id: does-not-trigger
    input: what time is it
    assertions: [{type: skill-trigger, skill: acme-deploy, should_trigger: false}]
"""))
    yes, no = (t.assertions[0] for t in suite.tests)
    expected = [{"tool": "Skill", "args": {"skill": "acme-deploy"}}]
    assert (yes.type, yes.negate, yes.config["expected"]) == ("tool_trajectory", False, expected)
    assert (no.type, no.negate, no.config["expected"]) == ("tool_trajectory", True, expected)


def test_composite_nesting_and_aggregators_use_the_same_names(tmp_path: Path) -> None:
    suite, _ = load_suite(_write(tmp_path, """\
target: llm
tests:
  - id: a
    input: hi
    assert:
      - metric: gate
        type: composite
        assert:
          - {metric: safety, type: llm-rubric, prompt: file://safety.md}
          - {metric: quality, type: contains, value: hi}
        aggregator: {type: weighted_average, weights: {safety: 0.3, quality: 0.7}}
      - metric: judged
        type: composite
        assert: [{metric: one, type: contains, value: hi}]
        aggregator: {type: llm-rubric, prompt: file://resolve.md}
"""))
    gate, judged = suite.tests[0].assertions
    assert gate.name == "gate" and [a["name"] for a in gate.config["assert"]] == ["safety", "quality"]
    assert gate.config["assert"][0]["prompt"] == "safety.md"
    assert judged.config["aggregator"]["type"] == "llm_judge"
    assert judged.config["aggregator"]["prompt"] == "resolve.md"


def test_tests_folder_reads_one_case_per_subfolder(tmp_path: Path) -> None:
    for name, body in (("b-second", "input: two\ncriteria: second\n"), ("a-first", "id: custom\ninput: one\n")):
        (tmp_path / "cases" / name).mkdir(parents=True)
        (tmp_path / "cases" / name / "case.yaml").write_text(body, encoding="utf-8")
    (tmp_path / "cases" / "notes").mkdir()
    suite, warnings = load_suite(_write(tmp_path, "name: dirs\ndescription: d\ntests: ./cases/\n", "EVAL.yaml"))
    assert [t.id for t in suite.tests] == ["custom", "b-second"]
    assert [t.input[0].content for t in suite.tests] == ["one", "two"]
    assert any("'notes' has no case.yaml" in w for w in warnings)
    (tmp_path / "cases" / "b-second" / "workspace").mkdir()
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "EVAL.yaml")
    assert "workspace folder (b-second/workspace/) is not supported" in str(caught.value)


def test_a_script_grader_with_a_model_proxy_is_passed_on_with_a_warning_in_v5(tmp_path: Path) -> None:
    # As eval.yaml's code_judge: the script gets `target` in its config, the run has no model proxy, a warning says so.
    suite, warnings = load_suite(_write(tmp_path, """\
target: llm
prompts: ["{{ input }}"]
tests:
  - id: a
    vars: {input: hi}
    assert:
      - {metric: recall, type: script, command: [bun, run, r.ts], target: {max_calls: 15}}
      - {metric: precision, type: script, command: [bun, run, p.ts], provider: {max_calls: 10}}
"""))
    recall, precision = suite.tests[0].assertions
    assert (recall.type, recall.name, recall.config["config"]) == ("code_judge", "recall", {"target": {"max_calls": 15}})
    assert precision.config["config"] == {"provider": {"max_calls": 10}}
    assert any("tests.0.assert.0.target: code_judge `target`" in w and "without model access" in w for w in warnings)
    assert any("tests.0.assert.1.provider: code_judge `provider`" in w for w in warnings)


def test_an_inline_experiment_block_with_a_target_is_the_execution_block(tmp_path: Path) -> None:
    suite, _ = load_suite(_write(tmp_path, """\
description: d
experiment:
  target: llm
tests:
  - id: a
    input: hi
    assertions: [{type: contains, value: hi}]
"""))
    assert suite.execution.targets == ["llm"]
    with pytest.raises(SpecErrors) as caught:  # other experiment fields are not execution's
        load_suite(_write(tmp_path, "description: d\nexperiment:\n  target: llm\n  runs: 2\n"
                                    "tests:\n  - id: a\n    input: hi\n"))
    assert "experiment: AgentV's field 'experiment' is not supported" in str(caught.value)


def test_head_hook_names_are_v2s_workspace_steps(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    suite, warnings = load_suite(_write(tmp_path, """\
target: llm
workspace:
  template: ws/
  hooks:
    before_all: {command: [node, setup.mjs]}
    after_all: {command: [node, teardown.mjs]}
    before_each: {command: [node, each.mjs]}
tests:
  - id: a
    input: hi
    assertions: [{type: contains, value: hi}]
"""))
    assert suite.workspace is not None
    assert suite.workspace.setup is not None and suite.workspace.setup.script == ["node", "setup.mjs"]
    assert suite.workspace.teardown is not None and suite.workspace.teardown.script == ["node", "teardown.mjs"]
    assert any("workspace.hooks.before_each:" in w and "per-test hooks are not run" in w for w in warnings)


def test_trajectory_tool_used_with_min_counts_is_a_minimum_per_tool(tmp_path: Path) -> None:
    suite, _ = load_suite(_write(tmp_path, """\
target: llm
prompts: ["{{ input }}"]
tests:
  - id: a
    vars: {input: research}
    assert:
      - {metric: depth, type: trajectory:tool-used, value: {name: webSearch, min: 2}}
      - {type: trajectory:tool-used, value: [{name: fetchPage, min: 1}, {name: summarize, min: 0}]}
"""))
    depth, fetch = suite.tests[0].assertions
    assert (depth.name, depth.config) == ("depth", {"mode": "any_order", "minimums": {"webSearch": 2}})
    assert fetch.config["minimums"] == {"fetchPage": 1, "summarize": 0}


def test_name_without_description_is_the_suite_name_in_either_vocabulary(tmp_path: Path) -> None:
    # AgentV's metadata.ts makes the description optional; seed 001 asks for one: a stored warning.
    body = "tests:\n  - id: a\n    input: hi\n    assertions: [{type: %s}]\n"
    for grader in ("llm-grader", "llm_judge"):
        suite, warnings = load_suite(_write(tmp_path, "name: weighted\ntarget: llm\n" + body % grader))
        assert suite.name == "weighted"
        assert any("has a `name` but no `description`" in w for w in warnings), warnings


def test_fields_agentv_ignores_are_stored_warnings_its_own_refused_by_name_typos_did_you_mean(tmp_path: Path) -> None:
    # AgentV's eval-validator.ts: an unknown top-level or test field is "ignored" (a warning); the
    # same rule as promptfoo's (formats/compat.py)
    suite, warnings = load_suite(_write(tmp_path, "description: d\nowner: team-a\n"
                                                  "tests:\n  - id: a\n    input: hi\n    ticket: X-1\n"))
    assert suite.tests[0].id == "a"
    assert any("owner: AgentV ignores this field too" in w for w in warnings)
    assert any("tests[0].ticket: AgentV ignores this field too" in w or "tests.0.ticket: AgentV ignores" in w
               for w in warnings), warnings
    with pytest.raises(SpecErrors) as caught:  # a field AgentV reads that we do not run, by name
        load_suite(_write(tmp_path, "description: d\ntests:\n  - id: a\n    input: hi\n    depends_on: [b]\n"))
    assert "depends_on: AgentV's field 'depends_on' is not supported" in str(caught.value)
    with pytest.raises(SpecErrors) as caught:  # a likely misspelling: AgentV would drop it silently
        load_suite(_write(tmp_path, "description: d\ntests:\n  - id: a\n    input: hi\n    criterai: ok\n"))
    assert "did you mean 'criteria'?" in str(caught.value) and "\n" not in str(caught.value.errors[0])
