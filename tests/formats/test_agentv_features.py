"""AgentV v2 features, each in a file written the way AgentV documents it, read into the one model."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.paths import PathPolicy


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def load(file: Path, root: Path | None = None):
    return load_suite(file, PathPolicy(allowed_roots=(root or file.parent,)))


def errors_of(file: Path, root: Path | None = None) -> str:
    with pytest.raises(SpecErrors) as caught:
        load(file, root)
    return str(caught.value)


def test_content_parts_text_and_file_reach_the_message(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "style.md", "Use short sentences.\r\nNo jargon.\n")
    suite, _ = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        description: content parts
        tests:
          - id: review
            criteria: mentions the style
            input:
              - role: system
                content:
                  - type: file
                    value: docs/style.md
              - role: user
                content:
                  - type: text
                    value: Review this paragraph.
                  - type: text
                    value: "It is what it is."
    """), tmp_path)
    system, user = suite.tests[0].input
    assert system.role == "system"
    assert system.content == '<file path="docs/style.md">\nUse short sentences.\nNo jargon.\n</file>'
    assert user.content == "Review this paragraph.\nIt is what it is."


def test_missing_or_outside_file_part_is_refused(tmp_path: Path) -> None:
    write(tmp_path.parent / "secret.txt", "s3cr3t")
    text = errors_of(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input:
              - role: user
                content:
                  - {type: file, value: nothere.md}
                  - {type: file, value: ../secret.txt}
                  - {type: image, value: x.png}
    """))
    assert "file not found: nothere.md" in text
    assert "outside the skill package" in text
    assert "unsupported content part type 'image'" in text
    assert "s3cr3t" not in text


def test_structured_content_is_sent_as_indented_json(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input:
              - role: user
                content: {invoice: INV-1, total: 12}
    """))
    assert suite.tests[0].input[0].content == '{\n  "invoice": "INV-1",\n  "total": 12\n}'


def test_name_is_the_trigger_of_the_metadata_block(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "dataset.eval.yaml", """
        description: Only a description, as 36 of AgentV's examples have
        tests:
          - id: a
            input: hi
    """))
    assert suite.description.startswith("Only a description")
    named, warnings = load(write(tmp_path / "named.eval.yaml", """
        name: named
        tests: [{id: a, input: hi}]
    """))
    assert named.name == "named" and any("no `description`" in w for w in warnings)


def test_workspace_hooks_repos_and_per_test_hooks(tmp_path: Path) -> None:
    (tmp_path / "workspace-template").mkdir()
    suite, warnings = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        description: workspace
        workspace:
          template: ../workspace-template
          hooks:
            before_all_tests:
              command: [node, ../scripts/setup.mjs]
            after_all_tests:
              command: [node, ../scripts/cleanup.mjs]
              timeout_ms: 5000
            after_each_test:
              reset: fast
          repos:
            - path: ./my-repo
              source: {type: git, url: "https://example.com/org/repo.git"}
              checkout: {ref: main, resolve: local}
              clone: {depth: 1}
          mode: pooled
        execution:
          workers: 3
        tests: [{id: a, input: hi}]
    """), tmp_path)
    ws = suite.workspace
    assert ws.template == "workspace-template"
    assert ws.setup.script == ["node", "../scripts/setup.mjs"]
    assert ws.teardown.script == ["node", "../scripts/cleanup.mjs"] and ws.teardown.timeout_ms == 5000
    assert [(r.path, r.url, r.ref, r.depth) for r in ws.repos] == [
        ("./my-repo", "https://example.com/org/repo.git", "main", 1)]
    assert suite.settings.max_concurrency == 3
    assert any(w.startswith("accepted, not used: workspace.hooks.after_each_test: per-test hooks are not run")
               for w in warnings), warnings
    assert any(w.startswith("accepted, not used: workspace.mode:") for w in warnings), warnings


def test_workspace_as_a_file_path(tmp_path: Path) -> None:
    write(tmp_path / "workspace.yaml", """
        template: ./workspace-template
        repos:
          - path: ./agentv
            source: {type: git, url: "https://example.com/agentv.git"}
    """)
    suite, _ = load(write(tmp_path / "evals" / "accuracy" / "dataset.eval.yaml", """
        workspace: ../../workspace.yaml
        tests: [{id: a, input: hi}]
    """), tmp_path)
    assert suite.workspace.template == "workspace-template"
    assert suite.workspace.repos[0].url == "https://example.com/agentv.git"
    assert "workspace file not found" in errors_of(write(tmp_path / "bad.eval.yaml", """
        workspace: nowhere.yaml
        tests: [{id: a, input: hi}]
    """), tmp_path)


def test_code_judge_extra_keys_cwd_and_target(tmp_path: Path) -> None:
    suite, warnings = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input: hi
            assert:
              - name: fields
                type: code_judge
                script: [uv, run, ../check.py]
                cwd: judges
                target: {max_calls: 10}
                fields: [{path: invoice_number}]
                expect_edited: [hello.txt]
    """))
    config = suite.tests[0].assertions[0].config
    assert config["command"] == ["uv", "run", "../check.py"] and "script" not in config
    assert config["cwd"] == "judges"
    assert config["config"] == {"target": {"max_calls": 10}, "fields": [{"path": "invoice_number"}],
                                "expect_edited": ["hello.txt"]}
    assert any("target proxy" in w for w in warnings)


def test_tool_trajectory_spellings(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input: hi
            assert:
              - {type: tool_trajectory, mode: any_order, minimums: {search: 2}}
              - type: tool_trajectory
                mode: superset
                args_match: [query]
                expected:
                  - {tool: search, args: any, max_duration_ms: 500}
                  - {tool: fetch, input: {url: "https://x"}, args_match: exact}
              - {type: tool_trajectory, mode: subset, expected: [{tool: search}]}
    """))
    minimums, superset, subset = suite.tests[0].assertions
    assert minimums.config["minimums"] == {"search": 2}
    assert superset.config["expected"][1]["args"] == {"url": "https://x"}
    assert subset.config["mode"] == "subset"
    text = errors_of(write(tmp_path / "bad.yaml", """
        tests:
          - id: a
            input: hi
            assert:
              - {type: tool_trajectory, mode: in_order, minimums: {search: 2}}
              - {type: tool_trajectory, expected: [{tool: s, arg_match: exact}]}
    """))
    assert "`minimums` belongs to mode any_order" in text
    assert "did you mean 'args_match'" in text and "did you mean 'arg_match'" not in text


def test_agent_judge_without_prompt_or_with_rubrics(tmp_path: Path) -> None:
    suite, warnings = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            criteria: The agent writes tests.
            input: Create unit tests
            assert:
              - {name: audit, type: agent-judge, max_steps: 5, temperature: 0}
              - name: audit-rubric
                type: agent_judge
                rubrics:
                  - {id: tests-dir, outcome: "A tests/ directory exists", weight: 1.0, required: true}
                  - Tests contain assertions
              - {name: delegated, type: agent_judge, judge_target: copilot_judge}
    """))
    plain, rubric, delegated = suite.tests[0].assertions
    assert plain.type == rubric.type == "agent_judge" and "prompt" not in plain.config
    assert "judge_target" not in delegated.config
    assert any("judge_target" in w for w in warnings)


def test_composite_aggregators_as_agentv_writes_them(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        tests:
          - id: a
            input: hi
            assert:
              - name: gate
                type: composite
                assert:
                  - {name: safety, type: llm_judge, prompt: "Is it safe? {output}"}
                aggregator: {type: code_judge, path: node ../scripts/gate.js}
              - name: decide
                type: composite
                assertions:
                  - {name: c1, type: contains, value: x}
                aggregator: {type: llm_judge, prompt: ../prompts/resolve.md}
              - name: flexible
                type: composite
                aggregator: {type: threshold, threshold: 0.5}
                assertions:
                  - {name: r1, type: rubrics, criteria: [Accurate]}
                  - {name: r2, type: icontains-all, value: [a, b]}
    """))
    gate, decide, flexible = suite.tests[0].assertions
    assert gate.config["aggregator"] == {"type": "code_judge", "command": "node ../scripts/gate.js"}
    assert decide.config["assert"][0]["name"] == "c1" and decide.config["aggregator"]["type"] == "llm_judge"
    assert flexible.config["aggregator"]["threshold"] == 0.5


def test_rubric_criteria_strings_score_ranges_and_required_min_score(tmp_path: Path) -> None:
    from eval_pipelines.grading.registry import parse_params

    suite, _ = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input: summarise
            assert:
              - type: rubrics
                criteria:
                  - Mentions divide-and-conquer approach
                  - id: factual_accuracy
                    weight: 2.0
                    required_min_score: 8
                    score_ranges:
                      0: Contains major factual errors.
                      10: Fully accurate.
    """))
    params = parse_params("rubrics", suite.tests[0].assertions[0].config)
    plain, ranged = params.criteria
    assert (plain.id, plain.outcome) == ("criterion-1", "Mentions divide-and-conquer approach")
    assert (ranged.scale.min, ranged.scale.max, ranged.required) == (0.0, 10.0, 0.8)
    assert ranged.scale.descriptions["10"] == "Fully accurate."


def test_regex_flags_string_field_accuracy_date_and_icontains(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input: hi
            assert:
              - {type: regex, value: "^dear", flags: "gi"}
              - type: field_accuracy
                fields:
                  - {path: invoice_date, match: date, formats: ["DD-MMM-YYYY", "YYYY-MM-DD"]}
              - {type: icontains-any, value: [hello, hi]}
              - {type: icontains_all, value: [hello]}
    """))
    regex, fields, any_, all_ = suite.tests[0].assertions
    assert regex.config["flags"] == ["ignorecase"]
    assert fields.config["fields"][0]["formats"] == ["DD-MMM-YYYY", "YYYY-MM-DD"]
    assert (any_.type, all_.type) == ("icontains_any", "icontains_all")
    text = errors_of(write(tmp_path / "bad.yaml", """
        tests:
          - id: a
            input: hi
            assert:
              - {type: regex, value: x, flags: "q"}
              - type: field_accuracy
                fields: [{path: d, match: date, formats: ["QQ-YYYY"]}]
              - {type: icontains-anything, value: x}
    """))
    assert "unknown date token" in text
    assert "tests[0].assert[0].flags[0]" in text
    assert "did you mean 'contains_any'" not in text


def test_llm_judge_prompt_command_and_reference_answer(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input: What is 2+2?
            reference_answer: "4"
            assert:
              - {name: templated, type: llm_judge, prompt: {command: [python, make_prompt.py]}}
    """))
    case = suite.tests[0]
    assert case.expected_output == "4"
    assert case.assertions[0].config["prompt"] == {"command": ["python", "make_prompt.py"]}
    assert "both `expected_output` and `reference_answer`" in errors_of(write(tmp_path / "both.yaml", """
        tests: [{id: a, input: x, expected_output: "4", reference_answer: "4"}]
    """))


def test_custom_assertion_from_agentv_assertions_folder(tmp_path: Path) -> None:
    write(tmp_path / ".agentv" / "assertions" / "word-count.ts", "export default {}\n")
    write(tmp_path / ".agentv" / "assertions" / "tone.py", "print('{}')\n")
    suite, warnings = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        tests:
          - id: a
            input: hi
            assert:
              - {type: word-count}
              - {type: tone, min: 3, required: true}
    """), tmp_path)
    words, tone = suite.tests[0].assertions
    assert words.type == tone.type == "code_judge"
    assert words.config["command"] == ["bun", "run", str(tmp_path / ".agentv" / "assertions" / "word-count.ts")]
    assert tone.config["command"][0] == "python" and tone.config["config"] == {"min": 3}
    assert tone.required is True
    assert any("wins over the built-in" in w for w in warnings)  # word-count is also our word_count


def test_env_interpolation_and_secret_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_CRITERIA", "Responds with a friendly greeting")
    monkeypatch.delenv("UNSET_PERSONA", raising=False)
    suite, warnings = load(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            criteria: "${{ EVAL_CRITERIA }}"
            input:
              - {role: system, content: "Persona: ${{UNSET_PERSONA}}."}
              - {role: user, content: "Hi"}
    """))
    case = suite.tests[0]
    assert case.criteria == "Responds with a friendly greeting"
    assert case.input[0].content == "Persona: ."
    assert any("interpolated from the environment: EVAL_CRITERIA, UNSET_PERSONA" in w for w in warnings)
    assert any("not set" in w and "UNSET_PERSONA" in w for w in warnings)
    assert not any("friendly greeting" in w for w in warnings)  # names only, never values
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-store")
    text = errors_of(write(tmp_path / "secret.yaml", """
        tests: [{id: a, input: "key is ${{ OPENAI_API_KEY }}"}]
    """))
    assert "looks like a secret" in text and "sk-do-not-store" not in text
    from eval_pipelines.formats.agentv.env import looks_secret

    assert [looks_secret(n) for n in ("GITHUB_TOKEN", "DB_PASSWORD", "AUTH", "AUTHOR_NAME", "MONKEY_COUNT")] == [
        True, True, True, False, False]


def test_yaml_merge_key_followed_by_an_override(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "eval.yaml", """
        tests:
          - &base
            id: a
            criteria: base criteria
            input: first input
          - <<: *base
            id: b
            input: overridden input
    """))
    a, b = suite.tests
    assert (b.id, b.criteria, b.input[0].content) == ("b", "base criteria", "overridden input")
    assert "duplicate key 'id'" in errors_of(write(tmp_path / "dup.yaml", """
        tests:
          - id: a
            id: b
            input: x
    """))


def test_did_you_mean_never_names_the_same_field() -> None:
    from eval_pipelines.suite.errors import unknown_field

    # The message the issue quotes: a field known one level up was suggested to itself.
    assert unknown_field("args_match", ["args_match", "mode"]) == "field 'args_match' is not allowed at this level"
    assert unknown_field("asert", ["assert"]) == "unknown field 'asert'; did you mean 'assert'?"


def test_workers_on_a_test_is_a_stored_warning(tmp_path: Path) -> None:
    # `workers` is how many tests run at once: a test cannot set it for itself.
    suite, warnings = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        description: per-test workers
        tests:
          - id: a
            input: hi
            execution: {workers: 2}
    """), tmp_path)
    assert suite.settings.max_concurrency is None
    assert any(w.startswith("accepted, not used: tests[0].execution.workers") for w in warnings), warnings


def test_assertions_is_agentvs_name_for_assert_at_suite_and_test_level(tmp_path: Path) -> None:
    suite, _ = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        description: AgentV spelling
        assertions:
          - type: contains
            value: suite-wide
        tests:
          - id: a
            input: hi
            assertions:
              - type: icontains-any
                value: [hello, hi]
    """), tmp_path)
    (case,) = suite.tests
    assert [a.type for a in case.assertions] == ["icontains_any", "contains"]


def test_workspace_reset_is_a_stored_warning(tmp_path: Path) -> None:
    _, warnings = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        description: reset
        workspace:
          reset: fast
        tests: [{id: a, input: hi}]
    """), tmp_path)
    assert any(w.startswith("accepted, not used: workspace.reset:") for w in warnings), warnings
