"""AgentV HEAD fields closed after the corpus measure: ``defaults``, assertion ``id``, rubric
``operator``, llm-grader ``max_steps``/``target``, ``options.rubric_prompt``."""

from __future__ import annotations

from pathlib import Path

from eval_pipelines.formats.loader import load_suite


def _write(tmp_path: Path, text: str, name: str = "EVAL.yaml") -> Path:
    file = tmp_path / name
    file.write_text(text, encoding="utf-8")
    return file


def test_defaults_is_accepted_with_a_stored_warning_and_assertion_ids_name_assertions(tmp_path: Path) -> None:
    # As AgentV's autoresearch example: `defaults` only holds an anchor the tests repeat; AgentV's
    # schema has no such field (its parser drops it), so it has no effect here either, and says so.
    suite, warnings = load_suite(_write(tmp_path, """\
name: classifier
target: llm
defaults:
  system_message: &system_prompt Classify the incident into P0..P3.
prompts:
  - "{{ input }}"
tests:
  - id: outage
    assert:
      - type: contains
        value: '"P0"'
        id: CLASSIFIES_P0
      - type: is-json
      - Reasoning mentions the outage
    vars:
      input:
        - role: system
          content: *system_prompt
        - role: user
          content: All servers are down.
"""))
    assert any("defaults: accepted without effect" in w for w in warnings)
    case = suite.tests[0]
    assert [m.content for m in case.input] == ["Classify the incident into P0..P3.", "All servers are down."]
    contains, is_json, rubric = case.assertions
    assert (contains.type, contains.name) == ("contains", "CLASSIFIES_P0")
    assert is_json.name != "CLASSIFIES_P0"
    assert rubric.type == "llm_judge"


def test_llm_grader_max_steps_and_target_are_stored_warnings(tmp_path: Path) -> None:
    # As AgentV's file-changes-graders example: max_steps is the step budget of AgentV's agentic grader
    # (file tools over the workspace); target a grader target of its own. Our judge has neither.
    suite, warnings = load_suite(_write(tmp_path, """\
description: graders
execution:
  target: llm
tests:
  - id: edit
    criteria: adds a subtract function
    input: Add a subtract function.
    assertions:
      - name: builtin
        type: llm-grader
        max_steps: 3
        temperature: 0
      - name: copilot
        type: llm-grader
        target: copilot_grader
        temperature: 0
""", "dataset.eval.yaml"))
    builtin, copilot = suite.tests[0].assertions
    assert (builtin.type, builtin.name, copilot.type) == ("llm_judge", "builtin", "llm_judge")
    assert "max_steps" not in builtin.config and "target" not in copilot.config
    assert builtin.config["temperature"] == 0
    assert any("assertions[0]: llm_judge `max_steps` (3" in w and "without tools" in w for w in warnings), warnings
    assert any("assertions[1]: llm_judge `target` ('copilot_grader'" in w for w in warnings), warnings


def test_options_rubric_prompt_is_the_llm_rubric_judge_template(tmp_path: Path) -> None:
    # As AgentV's readme-quickstart: default_test.options.rubric_prompt is the prompt of the test's
    # llm-rubric assertions (grader-parser.ts defaultRubricPrompt), {{ rubrics }} the criteria; a list
    # `value` is a structured rubric (ids rubric-N, checklist items required unless they say otherwise).
    suite, warnings = load_suite(_write(tmp_path, """\
description: quickstart
target: llm
prompts: ["{{ input }}"]
default_test:
  options:
    rubric_prompt: |
      Grade this.
      [[ ## question ## ]]
      {{ input }}
      [[ ## rubric ## ]]
      {{ rubrics }}
      [[ ## answer ## ]]
      {{ output }}
tests:
  - id: fizzbuzz
    vars: {input: Write FizzBuzz.}
    assert:
      - Implements FizzBuzz
      - type: llm-rubric
        value:
          - outcome: Simple and idiomatic
            weight: 0.5
          - {id: branches, outcome: "Handles 3, 5 and 15", weight: 1.5, required: false}
      - type: llm-rubric
        value: Uses a loop
""", "suite.yaml"))
    plain, structured, text = suite.tests[0].assertions
    assert plain.type == "llm_judge" and "prompt" not in plain.config
    assert structured.type == "rubrics"
    assert structured.config["criteria"] == [
        {"outcome": "Simple and idiomatic", "weight": 0.5, "id": "rubric-1", "required": True},
        {"id": "branches", "outcome": "Handles 3, 5 and 15", "weight": 1.5, "required": False}]
    template = "Grade this.\n[[ ## question ## ]]\n{input}\n[[ ## rubric ## ]]\n{criteria}\n[[ ## answer ## ]]\n{output}\n"
    assert structured.config["prompt"] == template
    assert text.type == "llm_judge" and text.config["prompt"] == template and text.config["rubric"] == "Uses a loop"
    assert any("options.rubric_prompt: used by the llm-rubric assertions only" in w for w in warnings), warnings
