"""AgentV HEAD features of the example suites that were refused before issue 18's last round:
custom assertions without their file, ``tests[].vars``, ``mode: conversation``, ``preprocessors``,
``workspace.scope``/``docker``, ``environment.setup``, ``extensions``.

Expected values come from AgentV's own examples, README files and tests (named at each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite


def _write(tmp_path: Path, text: str, name: str = "dataset.eval.yaml") -> Path:
    file = tmp_path / name
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


def _refusal(file: Path) -> str:
    with pytest.raises(SpecErrors) as caught:
        load_suite(file)
    return str(caught.value.errors[0])


CUSTOM = """\
tests:
  - id: greeting-response
    input: Say hello and introduce yourself
    assert:
      - type: contains
        value: Hello
      - type: word-count
"""


def test_custom_assertion_without_its_file_says_what_agentv_would_run(tmp_path: Path) -> None:
    # AgentV (examples/features/sdk-custom-assertion): `type: word-count` with no `value` is the custom
    # assertion .agentv/assertions/word-count.ts; registry/assertion-discovery.ts searches the eval
    # file's folder and its parents. Without the file the refusal says so, in one line.
    first = _refusal(_write(tmp_path / "evals", CUSTOM))
    assert "tests[0].assert[1]" in first and "\n" not in first
    assert "custom assertion: file not found: .agentv/assertions/word-count.ts" in first


def test_custom_assertion_with_its_file_in_a_parent_folder_runs_it(tmp_path: Path) -> None:
    (tmp_path / ".agentv" / "assertions").mkdir(parents=True)
    (tmp_path / ".agentv" / "assertions" / "word-count.js").write_text("console.log('{}')\n", encoding="utf-8")
    suite, _ = load_suite(_write(tmp_path / "evals", CUSTOM))
    judge = suite.tests[0].assertions[1]
    assert judge.type == "code_judge" and judge.config["command"][0] == "node"
    assert judge.config["command"][1].endswith("word-count.js")


def test_a_builtin_type_missing_its_value_has_no_custom_assertion_hint(tmp_path: Path) -> None:
    # `contains` is one of AgentV's built-ins: a missing value is only that.
    first = _refusal(_write(tmp_path, "tests: [{id: a, input: hi, assert: [{type: contains}]}]\n"))
    assert "value" in first and "custom assertion" not in first


# ---- tests[].vars (AgentV examples/features/test-vars-templating; yaml-parser tests) ---------------

CORPUS = Path(__file__).resolve().parents[1] / "data" / "agentv_head"


def test_vars_template_the_example_suite() -> None:
    # AgentV's README of the example: `{{question}}` and dotted paths like `{{expected.answer}}`;
    # the suite-level `input` references per-test vars too.
    suite, warnings = load_suite(CORPUS / "features" / "test-vars-templating" / "evals" / "dataset.eval.yaml")
    france, ada = suite.tests
    assert france.criteria == "Answers What is the capital of France? correctly"
    assert france.expected_output == "Paris"
    assert [(m.role, m.content) for m in france.input] == [
        ("system", "You are a concise assistant answering geography questions."),
        ("user", "Question: What is the capital of France?")]
    assert ada.criteria == "Greets Ada warmly" and ada.expected_output == "Hello, Ada!"
    assert [(m.role, m.content) for m in ada.input] == [
        ("system", "You are a concise assistant answering etiquette questions."), ("user", "Say hello to Ada.")]
    assert warnings == []


def test_vars_reach_assertions_and_leave_metadata_alone(tmp_path: Path) -> None:
    # AgentV's loader tests: "renders assertion values and metrics with per-test vars" (value DENIED,
    # name policy_decision) and "applies per-test vars to suite and test input templates" (metadata
    # keeps `{{question}}`).
    suite, _ = load_suite(_write(tmp_path, """\
tests:
  - id: assertions
    vars: {expected: DENIED, metric_name: policy, question: "What is the capital of France?"}
    input: "Answer clearly: {{question}}"
    criteria: Answers {{question}} correctly
    metadata: {untouched: "{{question}}"}
    assert:
      - type: contains
        metric: "{{ vars.metric_name }}_decision"
        value: "{{ vars.expected }}"
      - Mentions {{ question }}
"""))
    case = suite.tests[0]
    contains, rubric = case.assertions
    assert contains.type == "contains" and contains.config["value"] == "DENIED" and contains.name == "policy_decision"
    assert rubric.config["rubric"] == "Mentions What is the capital of France?"
    assert case.input[0].content == "Answer clearly: What is the capital of France?"
    assert case.metadata == {"untouched": "{{question}}"}


def test_vars_missing_name_renders_empty_with_a_warning_and_skip_defaults_drops_suite_input(tmp_path: Path) -> None:
    suite, warnings = load_suite(_write(tmp_path, """\
input: "Topic: {{topic}}"
tests:
  - id: with-vars
    vars: {topic: tides}
    input: "Explain {{topic}} to {{audience}}"
    criteria: clear
  - id: own-input-only
    vars: {topic: waves}
    execution: {skip_defaults: true}
    input: "Explain {{topic}}"
    criteria: clear
"""))
    first, second = suite.tests
    assert [(m.role, m.content) for m in first.input] == [("user", "Topic: tides"), ("user", "Explain tides to ")]
    assert [(m.role, m.content) for m in second.input] == [("user", "Explain waves")]
    assert any("tests[0]" in w and "audience" in w and "rendered empty" in w for w in warnings)


def test_vars_that_are_not_a_mapping_or_a_broken_template_are_refused(tmp_path: Path) -> None:
    first = _refusal(_write(tmp_path, "tests: [{id: a, vars: [1], input: hi, criteria: c}]\n"))
    assert "tests[0].vars: invalid vars" in first
    first = _refusal(_write(tmp_path, "tests: [{id: a, vars: {x: 1}, input: '{{ x ', criteria: c}]\n", "b.eval.yaml"))
    assert "tests[0].input" in first and "template does not render" in first and "\n" not in first


def test_vars_template_cannot_reach_python_objects(tmp_path: Path) -> None:
    first = _refusal(_write(tmp_path, "tests: [{id: a, vars: {x: 1}, input: \"{{ x.__class__.__mro__ }}\", "
                                      "criteria: c}]\n"))
    assert "template does not render" in first


# ---- preprocessors (AgentV evaluator-parser.ts parsePreprocessors, content-preprocessor.ts) --------

PREPROCESSED = """\
description: Convert file outputs to grader-readable text before llm grading
preprocessors:
  - type: xlsx
    command: ["bun", "run", "../scripts/preprocessors/xlsx-to-csv.ts"]
tests:
  - id: spreadsheet-output
    input: Generate the spreadsheet report
    criteria: The extracted spreadsheet content includes the revenue rows
"""


def test_preprocessors_need_their_command_file_as_in_agentv(tmp_path: Path) -> None:
    # parsePreprocessors: "preprocessor command file not found" when the command's last item is absent.
    first = _refusal(_write(tmp_path / "evals", PREPROCESSED))
    assert "preprocessors[0].command: preprocessor command file not found: ../scripts/preprocessors/xlsx-to-csv.ts" \
        in first and "\n" not in first


def test_preprocessors_are_checked_then_stored_as_a_warning_that_they_never_run(tmp_path: Path) -> None:
    script = tmp_path / "scripts" / "preprocessors" / "xlsx-to-csv.ts"
    script.parent.mkdir(parents=True)
    script.write_text("// converts\n", encoding="utf-8")
    suite, warnings = load_suite(_write(tmp_path / "evals", PREPROCESSED))
    # a text answer passes through unchanged in AgentV (extractTextWithPreprocessors): the test is as written
    (case,) = suite.tests
    assert case.input[0].content == "Generate the spreadsheet report"
    assert [a.type for a in case.assertions] == ["llm_judge"]
    assert any("preprocessors (xlsx): accepted, never run" in w for w in warnings)


@pytest.mark.parametrize(("written", "message"), [
    ("preprocessors: {type: xlsx}", "preprocessors: preprocessors must be a list"),
    ("preprocessors: [{command: [bun, x.ts]}]", "preprocessors[0].type: preprocessor.type is required"),
    ("preprocessors: [{type: pdf, command: []}]", "preprocessors[0].command: preprocessor 'pdf' requires command"),
    ("preprocessors: [{type: pdf, command: [x.ts], shell: true}]", "preprocessors[0].shell: unknown field"),
])
def test_malformed_preprocessors_are_refused_in_one_line(tmp_path: Path, written: str, message: str) -> None:
    first = _refusal(_write(tmp_path, f"{written}\ntests: [{{id: a, input: hi, criteria: c}}]\n"))
    assert message in first and "\n" not in first


# ---- mode: conversation (AgentV examples/features/multi-turn-conversation-live, conversation-mode.test.ts) ----

def test_conversation_turns_become_cases_that_follow_each_other() -> None:
    suite, warnings = load_suite(CORPUS / "features" / "multi-turn-conversation-live" / "evals" / "dataset.eval.yaml")
    by_id = {t.id: t for t in suite.tests}
    # 5 tests: 3 + 2 + 2 + 2 + 2 turns in the example
    assert len(suite.tests) == 11
    first, second, third = (by_id[f"context-retention.turn-{k}"] for k in (1, 2, 3))
    assert (first.after, second.after) == ([], ["context-retention.turn-1"])
    assert third.after == ["context-retention.turn-1", "context-retention.turn-2"]
    # each turn: the system prompt, the earlier turns with their answers, then its own input
    assert [m.role for m in third.input] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third.input[1].content == "What is 15% of 200?" and third.input[3].content == "Now double that result."
    assert third.input[5].content == "What were the original numbers I asked about?"
    assert "context-retention.turn-2" in third.input[4].content  # the mark the engine fills with the answer
    assert [a.config["rubric"] for a in second.assertions] == [
        "References the previous answer of 30", "Correctly calculates double as 60"]
    assert second.criteria == "Agent maintains context and provides relevant responses across turns"
    assert second.metadata["conversation"] == {"test": "context-retention", "turn": 2, "turns": 3}
    # a structured per-turn assertion keeps its type; test-level assertions go with the last turn
    assert [a.type for a in by_id["mixed-assertions.turn-2"].assertions] == ["llm_judge", "contains"]
    last = by_id["conversation-coherence.turn-2"]
    assert [a.name for a in last.assertions][-2:] == ["conversation", "conversation"]
    assert last.assertions[-1].config["rubric"] == "Agent does not contradict its own prior recommendations"
    assert any("aggregation 'min' is not applied" in w for w in warnings)
    assert any("on_turn_failure 'stop' is not applied" in w for w in warnings)


def test_conversation_window_size_keeps_the_system_prompt_and_the_last_turns(tmp_path: Path) -> None:
    # conversation-mode.test.ts: window_size 1 -> system + the last user/assistant pair on the third call
    suite, _ = load_suite(_write(tmp_path, """\
tests:
  - id: conv-window
    mode: conversation
    window_size: 1
    criteria: Anything
    input: [{role: system, content: System prompt}]
    turns: [{input: T1}, {input: T2}, {input: T3}]
"""))
    third = suite.tests[2]
    assert [(m.role, m.content) for m in third.input][:2] == [("system", "System prompt"), ("user", "T2")]
    assert [m.role for m in third.input] == ["system", "user", "assistant", "user"]
    assert third.input[-1].content == "T3"


@pytest.mark.parametrize(("written", "message"), [
    ("mode: batch\n    turns: [{input: a}]", "tests[0].mode: test mode 'batch' is not supported"),
    ("mode: conversation\n    turns: []", "tests[0].turns: a conversation needs turns"),
    ("mode: conversation\n    turns: [{say: a}]", "tests[0].turns[0]: each turn needs an input"),
    ("mode: conversation\n    aggregation: median\n    turns: [{input: a}]", "invalid aggregation 'median'"),
    ("mode: conversation\n    window_size: 0\n    turns: [{input: a}]", "invalid window_size 0"),
])
def test_malformed_conversations_are_refused_in_one_line(tmp_path: Path, written: str, message: str) -> None:
    first = _refusal(_write(tmp_path, f"tests:\n  - id: c\n    criteria: x\n    {written}\n"))
    assert message in first and "\n" not in first


# ---- workspace.scope / workspace.docker (AgentV examples/features/docker-workspace, yaml-parser.ts) ------

def test_workspace_scope_suite_is_the_one_workspace_of_the_run(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "README.md").write_text("fixture\n", encoding="utf-8")
    suite, _ = load_suite(_write(tmp_path, """\
workspace: {template: ./repo, scope: suite}
tests: [{id: a, input: hi, criteria: c}]
"""))
    assert suite.workspace is not None and suite.workspace.template.endswith("repo")


def test_workspace_scope_per_test_and_docker_are_refused_in_one_line(tmp_path: Path) -> None:
    first = _refusal(_write(tmp_path, "workspace: {template: ., scope: test}\ntests: [{id: a, input: hi, criteria: c}]\n"))
    assert "workspace.scope: workspace scope 'test' is not supported" in first and "\n" not in first
    # the example: script graders run inside a python:3.11-slim container in AgentV
    first = _refusal(CORPUS / "features" / "docker-workspace" / "evals" / "docker-example.EVAL.yaml")
    assert "workspace.docker: Docker workspaces are not supported" in first and "python:3.11-slim" in first
    assert "\n" not in first


# ---- environment.setup (AgentV loaders/environment-recipe.ts, environment/host.ts) ------------------

def test_environment_setup_is_refused_in_one_line_saying_what_agentv_does() -> None:
    first = _refusal(CORPUS / "contract" / "evals" / "repo-materialization.eval.yaml")
    assert first.startswith(str(CORPUS / "contract" / "evals" / "repo-materialization.eval.yaml") + ":7: ")
    assert "environment.setup: a setup command is not supported" in first and "prepare the workdir" in first
    assert "\n" not in first


def test_environment_without_setup_is_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "fixture").mkdir()
    suite, _ = load_suite(_write(tmp_path, """\
environment: {type: host, workdir: ./fixture}
prompts: ["{{ input }}"]
tests: [{id: a, vars: {input: hi}, assert: [{type: contains, value: hi}]}]
""", "suite.yaml"))
    assert suite.workspace is not None and suite.workspace.template == "./fixture"


# ---- extensions (AgentV extensions/runner.ts) -------------------------------------------------------

def test_extension_hooks_and_configured_agent_rules_are_refused_each_saying_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors) as caught:
        load_suite(_write(tmp_path, """\
extensions:
  - file://../scripts/setup.ts:beforeEach
  - id: agentv:agent-rules
    skills: rules/skills
prompts: ["{{ input }}"]
tests: [{id: a, vars: {input: hi}, assert: [{type: contains, value: hi}]}]
""", "suite.yaml"))
    hook, rules = (str(e) for e in caught.value.errors[:2])
    assert "extensions[0]: extension hook file://../scripts/setup.ts:beforeEach is not supported" in hook
    assert "lifecycle hook" in hook and "into its own process" in hook
    assert "extensions[1].skills: agentv:agent-rules `skills` paths are not supported" in rules
    assert "\n" not in hook + rules


def test_agent_rules_stores_what_the_workspace_holds_with_every_case(tmp_path: Path) -> None:
    # runner.ts runAgentRulesExtension: without configured paths it looks in the workspace for
    # .claude/skills, .agents/skills, ... and AGENTS.md, CLAUDE.md, rules; results carry agent_rules_paths.
    (tmp_path / "workspace" / ".agents" / "skills" / "acme-deploy").mkdir(parents=True)
    (tmp_path / "workspace" / "AGENTS.md").write_text("# rules\n", encoding="utf-8")
    suite, warnings = load_suite(_write(tmp_path / "evals", """\
extensions: [agentv:agent-rules]
environment: {type: host, workdir: ../workspace/}
prompts: ["{{ input }}"]
tests:
  - {id: a, vars: {input: "deploy?"}, assert: [The agent invoked the acme-deploy skill]}
  - {id: b, vars: {input: "rollback?"}, assert: [The agent invoked the acme-deploy skill]}
""", "suite.yaml"))
    assert [c.metadata["agent_rules_paths"] for c in suite.tests] == [
        {"skills": [".agents/skills"], "rules": ["AGENTS.md"]}] * 2
    assert any("agentv:agent-rules" in w and "not handed them" in w for w in warnings)


def test_the_tool_calls_template_example_loads_with_its_skill_found() -> None:
    suite, warnings = load_suite(CORPUS / "features" / "tool-calls-template" / "evals" / "suite.yaml")
    assert {str(c.metadata["agent_rules_paths"]) for c in suite.tests} == {"{'skills': ['.agents/skills']}"}


def test_vars_with_input_files_leave_the_suite_input_shared_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("note\n", encoding="utf-8")
    suite, warnings = load_suite(_write(tmp_path, """\
input: "Topic: {{topic}}"
input_files: [notes.txt]
tests:
  - {id: a, vars: {topic: tides}, input: "Explain {{topic}}", criteria: clear}
"""))
    assert suite.tests[0].input[0].content == "Topic: {{topic}}"
    assert "Explain tides" in suite.tests[0].input[-1].content
    assert any("suite-level input is not rendered" in w for w in warnings)


# ---- v5 shape: tests[].criteria and {{ vars.name }} (AgentV yaml-parser loader tests) --------------

def test_v5_criteria_expected_output_and_namespaced_vars_render_as_in_agentv(tmp_path: Path) -> None:
    # AgentV: "applies per-test vars to suite and test input templates" and "renders assertion values
    # and metrics with per-test vars" (value DENIED, name policy_decision)
    suite, warnings = load_suite(_write(tmp_path, """\
prompts:
  - "{{ input }}"
tests:
  - id: templated
    vars:
      question: What is the capital of France?
      expected_answer: Paris
      input:
        - role: user
          content: "Answer clearly: {{question}}"
        - role: assistant
          content: Thinking about {{question}}
    criteria: Answers {{question}} correctly
    expected_output: "{{expected_answer}}"
    metadata:
      untouched: "{{question}}"
  - id: assertions
    vars: {expected: DENIED, metric_name: policy, input: Check access}
    assert:
      - type: contains
        metric: "{{ vars.metric_name }}_decision"
        value: "{{ vars.expected }}"
""", "suite.yaml"))
    templated, checked = suite.tests
    assert templated.criteria == "Answers What is the capital of France? correctly"
    assert [(m.role, m.content) for m in templated.input] == [
        ("user", "Answer clearly: What is the capital of France?"),
        ("assistant", "Thinking about What is the capital of France?")]
    assert templated.expected_output == "Paris"
    assert templated.metadata["untouched"] == "{{question}}"
    assert [a.type for a in templated.assertions] == ["llm_judge"]  # graded on its criteria
    assert "vars" not in templated.metadata["vars"]
    (contains,) = checked.assertions
    assert (contains.type, contains.config["value"], contains.name) == ("contains", "DENIED", "policy_decision")
    assert warnings == []


def test_v5_env_placeholders_are_left_as_written_with_a_warning(tmp_path: Path) -> None:
    suite, warnings = load_suite(_write(tmp_path, """\
prompts: ["{{ input }}"]
tests:
  - id: a
    vars:
      input:
        - {role: system, content: "{{ env.CUSTOM_SYSTEM_PROMPT }}"}
        - {role: user, content: "Hi {{ name }}"}
      name: Ada
    assert: [Greets Ada]
""", "suite.yaml"))
    assert [m.content for m in suite.tests[0].input] == ["{{ env.CUSTOM_SYSTEM_PROMPT }}", "Hi Ada"]
    assert any("not rendered: env is not one of the test's vars" in w for w in warnings)
