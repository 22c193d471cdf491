"""More AgentV v2 spellings met in AgentV's examples, each in a file written the way AgentV
documents it: ``input_files`` (test and suite level), ``skip_defaults`` and the suite's
``input``, the short workspace hook names, and an ``llm_judge`` with its own ``target``."""

from __future__ import annotations

from pathlib import Path

from tests.formats.test_agentv_features import errors_of, load, write


def test_input_files_are_file_parts_before_the_text(tmp_path: Path) -> None:
    # AgentV's input-files-shorthand example: `input_files` + a string `input` is one user
    # message, the file parts first, then the text (loaders/shorthand-expansion.ts).
    write(tmp_path / "fixtures" / "sales.csv", "month,revenue\nJan,12000\n")
    suite, _ = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        description: Demonstrates input_files shorthand for attaching files to test inputs
        tests:
          - id: summarize-sales-shorthand
            criteria: Agent summarizes the monthly revenue trends
            input_files:
              - ../fixtures/sales.csv
            input: "Summarize the monthly revenue trends in this CSV."
          - id: summarize-sales-explicit
            criteria: Agent summarizes the monthly revenue trends
            input:
              - role: user
                content:
                  - type: file
                    value: ../fixtures/sales.csv
                  - type: text
                    value: "Summarize the monthly revenue trends in this CSV."
    """), tmp_path)
    shorthand, explicit = suite.tests
    assert [m.role for m in shorthand.input] == ["user"]
    assert shorthand.input[0].content == explicit.input[0].content == (
        '<file path="../fixtures/sales.csv">\nmonth,revenue\nJan,12000\n</file>\n'
        "Summarize the monthly revenue trends in this CSV.")


def test_suite_input_and_input_files_apply_unless_the_test_skips_defaults(tmp_path: Path) -> None:
    # AgentV's suite-level-input-files example: the suite's `input` is prepended as a message,
    # its `input_files` go before each test's text; `execution.skip_defaults` drops both.
    write(tmp_path / "evals" / "system-prompt.md", "You are a travel assistant.\n")
    write(tmp_path / "evals" / "other.md", "Own file.\n")
    suite, _ = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        name: suite-level-input-files-example
        description: Suite-level input + input_files shorthands
        input: "Use the attached context to answer travel questions."
        input_files:
          - ./system-prompt.md
        tests:
          - id: japan-spring
            criteria: Recommends spring
            input: When is the best time to visit Japan?
          - id: own-files
            criteria: Uses its own file
            input_files: [./other.md]
            input: Answer from the file.
          - id: skip-suite-defaults
            criteria: Provides a direct answer about currency exchange
            input: What currency does Thailand use?
            execution:
              skip_defaults: true
    """), tmp_path)
    japan, own, skipped = suite.tests
    assert [m.content for m in japan.input] == [
        "Use the attached context to answer travel questions.",
        '<file path="./system-prompt.md">\nYou are a travel assistant.\n</file>\n'
        "When is the best time to visit Japan?"]
    assert own.input[-1].content == '<file path="./other.md">\nOwn file.\n</file>\nAnswer from the file.'
    assert len(own.input) == 2  # the suite's input still comes first
    assert [m.content for m in skipped.input] == ["What currency does Thailand use?"]


def test_input_files_need_a_string_input_and_existing_files(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "Notes.\n")
    text = errors_of(write(tmp_path / "eval.yaml", """
        tests:
          - id: turns
            criteria: c
            input_files: [notes.md]
            input:
              - role: user
                content: hi
          - id: missing
            criteria: c
            input_files: [absent.md]
            input: hi
          - id: empty
            criteria: c
            input_files: []
            input: hi
    """))
    assert "tests[0].input: input_files needs a string `input`" in text
    assert "tests[1].input_files[0]: file not found: absent.md" in text
    assert "tests[2].input_files: invalid input_files" in text


def test_short_hook_names_and_on_reuse(tmp_path: Path) -> None:
    # AgentV's parser reads hooks as before_all / before_each / after_each / after_all; the
    # v2 examples also write before_all_tests ... and on_reuse (pooled workspaces).
    (tmp_path / "template").mkdir()
    suite, warnings = load(write(tmp_path / "evals" / "dataset.eval.yaml", """
        description: hooks
        workspace:
          template: ../template
          mode: pooled
          hooks:
            before_all:
              command: [node, ../scripts/setup.mjs]
              timeout_ms: 60000
            after_all:
              command: [node, ../scripts/teardown.mjs]
            after_each:
              reset: fast
            on_reuse:
              reset: fast
        tests:
          - id: a
            criteria: c
            input: hi
    """), tmp_path)
    assert suite.workspace.setup.script == ["node", "../scripts/setup.mjs"]
    assert suite.workspace.setup.timeout_ms == 60000
    assert suite.workspace.teardown.script == ["node", "../scripts/teardown.mjs"]
    for hook in ("after_each", "on_reuse"):
        assert any(w.startswith(f"accepted, not used: workspace.hooks.{hook}:") for w in warnings), warnings
    assert "unknown hook 'before_everything'" in errors_of(write(tmp_path / "evals" / "bad.eval.yaml", """
        workspace:
          hooks:
            before_everything: {command: [true]}
        tests: [{id: a, criteria: c, input: hi}]
    """), tmp_path)


def test_llm_judge_target_is_a_stored_warning(tmp_path: Path) -> None:
    # AgentV's offline-judge-benchmark showcase: composite children are llm-judges each with
    # its own judge `target`; here the suite's judge grades them, and the warning says so.
    suite, warnings = load(write(tmp_path / "eval.yaml", """
        description: judge panel
        tests:
          - id: a
            criteria: c
            input: hi
            assertions:
              - name: judge-panel
                type: composite
                aggregator: {type: threshold, threshold: 0.6}
                assertions:
                  - name: judge-gpt-5-mini
                    type: llm-judge
                    target: judge_gpt_5_mini
    """))
    child = suite.tests[0].assertions[0].config["assert"][0]
    assert "target" not in child
    assert any("llm_judge `target` ('judge_gpt_5_mini'" in w for w in warnings), warnings
