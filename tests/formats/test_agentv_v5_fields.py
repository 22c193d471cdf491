"""AgentV v5 fields whose effect, refusal or warning no other test showed
(tests/formats/field_contract.yaml names these tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite

PROMPTS = "prompts: ['{{ input }}']\n"


def load(tmp_path: Path, text: str):
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return load_suite(path)


def test_suite_metadata_providers_scenarios_workspace_and_timeout(tmp_path: Path) -> None:
    (tmp_path / "template").mkdir()
    suite, warnings = load(tmp_path, PROMPTS + """
$schema: https://agentv.dev/schema/eval.json
name: v5
description: All the suite fields
author: Ada
license: MIT
metadata: {owner: qa}
providers: [gh-models, openai:chat:gpt-4o-mini]
workspace: {template: ./template, scope: suite}
evaluate_options: {timeout_ms: 9000}
scenarios:
  - config: [{vars: {input: a}}, {vars: {input: b}}]
    tests: [{description: from a scenario}]
tests: [{id: t, vars: {input: x}}]
""")
    assert suite.format == "agentv-v5"
    assert (suite.description, suite.author, suite.license) == ("All the suite fields", "Ada", "MIT")
    assert suite.execution.targets == ["gh-models", "openai-chat-gpt-4o-mini"]
    assert suite.settings.timeout_ms == 9000
    assert suite.workspace is not None and suite.workspace.template == "./template"
    assert [(c.id, c.input[0].content, c.metadata["owner"]) for c in suite.tests] == [
        ("t", "x", "qa"), ("test-2", "a", "qa"), ("test-3", "b", "qa")]
    assert warnings == []


def test_targets_is_a_list_of_target_names(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, PROMPTS + "name: v5\ntargets: [fast, slow]\ntests: [{id: t, vars: {input: x}}]\n")
    assert suite.execution.targets == ["fast", "slow"]


def test_workspace_scope_other_than_suite_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, PROMPTS + "name: v5\nworkspace: {template: ./t, scope: test}\n"
                                 "tests: [{id: t, vars: {input: x}}]\n")
    assert "workspace scope 'test' is not supported" in str(caught.value).splitlines()[0]


def test_conversation_id_is_a_stored_warning(tmp_path: Path) -> None:
    _, warnings = load(tmp_path, PROMPTS + "name: v5\ntests: [{id: t, conversation_id: c1, vars: {input: x}}]\n")
    assert [w for w in warnings if "conversation_id: accepted without effect" in w]


def test_agentv_assertion_fields(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, PROMPTS + """
name: v5
tests:
  - id: t
    vars: {input: x}
    assert:
      - {type: contains, value: x, name: has-x, negate: true}
      - {type: script, script: [python3, check.py]}
      - {type: llm-rubric, prompt: file://judge.md}
      - {type: trajectory:tool-used, tools: [search]}
      - {type: trajectory:tool-sequence, sequence: [search, answer]}
      - {type: skill-used, skill: pdf}
      - {type: regex, value: '^a.b$', flags: is}
""")
    named, script, judged, used, sequence, skill, regex = suite.tests[0].assertions
    assert (named.name, named.negate) == ("has-x", True)
    assert script.type == "code_judge" and script.config["command"] == ["python3", "check.py"]
    assert judged.type == "llm_judge" and judged.config["prompt"] == "judge.md"
    assert used.config["expected"] == [{"tool": "search"}]
    assert sequence.config["mode"] == "in_order" and [e["tool"] for e in sequence.config["expected"]] == [
        "search", "answer"]
    assert skill.config["expected"] == [{"tool": "Skill", "args": {"skill": "pdf"}}]
    assert regex.config["flags"] == ["ignorecase", "dotall"]
