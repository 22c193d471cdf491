"""Seed 001 eval YAML loading from files written under tmp_path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.paths import PathPolicy


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_errors(file: Path, policy: PathPolicy | None = None) -> list[SpecError]:
    with pytest.raises(SpecErrors) as info:
        load_suite(file, policy)
    assert info.value.errors, "SpecErrors raised without errors"
    return info.value.errors


def only(errors: list[SpecError], path: tuple) -> SpecError:
    matching = [e for e in errors if e.path == path]
    assert len(matching) == 1, f"no single error at {path}: {errors}"
    return matching[0]


# ---- happy path ------------------------------------------------------------

def test_complete_suite_with_metadata_execution_and_defaults(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        name: export-screening
        description: Evaluates export screening
        version: "1.0"
        author: acme
        tags: [compliance, agents]
        requires:
          agentv: ">=0.6.0"
        execution:
          targets: [claude-agent, gpt-agent]
          trials:
            count: 3
            strategy: pass_at_k
        thresholds:
          pass_rate: 0.9
        assert:
          - type: contains
            value: "Screened"
        tests:
          - id: sanctioned
            input: "Screen: Huawei"
            expected_output: DENIED
            criteria: Should deny
            assert:
              - type: contains
                value: DENIED
                required: true
                weight: 2
            metadata:
              category: denial
          - id: ambiguous
            input: "Screen: BCRI"
            skip_defaults: true
            assert:
              - type: regex
                value: "REVIEW|ESCALAT"
            execution:
              targets: [claude-agent]
    """)
    suite, warnings = load_suite(f)
    # `requires` is kept but checks nothing here: a stored warning says so.
    assert [w.split(" (")[0] for w in warnings] == [
        "accepted, not used: requires.agentv: tool versions are not checked: eval-pipelines runs the suite "
        "itself, not with that tool"]
    assert suite.name == "export-screening" and suite.format == "eval-yaml"
    assert suite.version == "1.0" and suite.author == "acme"
    assert suite.tags == ["compliance", "agents"] and suite.requires == {"agentv": ">=0.6.0"}
    assert suite.execution.targets == ["claude-agent", "gpt-agent"]
    assert suite.execution.trials.count == 3
    assert suite.thresholds == {"pass_rate": 0.9}
    first, second = suite.tests
    # Suite-level assert is appended after the test's own.
    assert [(a.type, a.config.get("value")) for a in first.assertions] == [
        ("contains", "DENIED"), ("contains", "Screened")]
    assert first.assertions[0].required is True and first.assertions[0].weight == 2
    assert first.category == "denial" and first.criteria == "Should deny"
    assert first.expected_output == "DENIED"
    assert first.source_file == str(f) and first.source_line == 19
    # skip_defaults drops the suite-level assert.
    assert [a.type for a in second.assertions] == ["regex"]
    assert suite.targets_for(first) == ["claude-agent", "gpt-agent"]
    assert suite.targets_for(second) == ["claude-agent"]


def test_suite_without_metadata_takes_file_stem_as_name(tmp_path: Path) -> None:
    suite, _ = load_suite(write(tmp_path / "smoke.yaml", """
        tests:
          - input: hello
          - input: 42
    """))
    assert suite.name == "smoke"
    assert [t.id for t in suite.tests] == ["test-1", "test-2"]
    assert suite.tests[1].user_text == "42"


def test_input_as_list_of_messages_and_suite_input_prepended(tmp_path: Path) -> None:
    suite, _ = load_suite(write(tmp_path / "eval.yaml", """
        input:
          - role: system
            content: You are a compliance officer.
        tests:
          - id: chat
            input:
              - role: user
                content: first
              - role: assistant
                content: reply
              - role: user
                content: [{type: text, text: second}]
          - id: plain
            input: just text
    """))
    chat, plain = suite.tests
    assert [(m.role, m.content) for m in chat.input] == [
        ("system", "You are a compliance officer."), ("user", "first"),
        ("assistant", "reply"), ("user", "second")]
    assert chat.user_text == "first\n\nsecond"
    assert [(m.role, m.content) for m in plain.input] == [
        ("system", "You are a compliance officer."), ("user", "just text")]


def test_execution_evaluators_alias_warns_and_maps_to_assert(tmp_path: Path) -> None:
    suite, warnings = load_suite(write(tmp_path / "eval.yaml", """
        execution:
          evaluators:
            - type: contains
              value: ok
        tests:
          - id: a
            input: x
            assert:
              - type: equals
                value: ok
          - id: b
            input: y
            skip_defaults: true
    """))
    assert len(warnings) == 1 and "execution.evaluators is deprecated" in warnings[0]
    assert [a.type for a in suite.tests[0].assertions] == ["equals", "contains"]
    assert suite.tests[1].assertions == []


def test_assert_type_aliases_are_canonicalised(tmp_path: Path) -> None:
    suite, _ = load_suite(write(tmp_path / "eval.yaml", """
        tests:
          - input: x
            assert:
              - type: exact-match
                value: x
              - type: regex_match
                value: x
              - type: Contains
                value: x
    """))
    assert [a.type for a in suite.tests[0].assertions] == ["equals", "regex", "contains"]


# ---- tests from files ------------------------------------------------------

def test_tests_as_string_path_to_jsonl(tmp_path: Path) -> None:
    write(tmp_path / "data" / "cases.jsonl",
          '{"id": "j1", "input": "one", "expected_output": "1"}\n\n'
          '{"id": "j2", "input": "two", "assert": [{"type": "equals", "value": "2"}]}\n')
    f = write(tmp_path / "eval.yaml", """
        assert:
          - type: is_json
        tests: ./data/cases.jsonl
    """)
    suite, _ = load_suite(f)
    assert [t.id for t in suite.tests] == ["j1", "j2"]
    assert suite.tests[0].expected_output == "1"
    assert [a.type for a in suite.tests[1].assertions] == ["equals", "is_json"]
    assert suite.tests[1].source_file == str(tmp_path / "data" / "cases.jsonl")
    assert suite.tests[1].source_line == 3  # blank line 2 skipped, numbering kept


def test_tests_list_mixing_inline_file_and_glob(tmp_path: Path) -> None:
    write(tmp_path / "cases" / "accuracy.yaml", """
        - id: acc-1
          input: from accuracy
    """)
    write(tmp_path / "cases" / "safety.yaml", """
        tests:
          - id: safe-1
            input: from safety
    """)
    write(tmp_path / "cases" / "ignored.txt", "not a dataset")
    write(tmp_path / "more.jsonl", '{"id": "j1", "input": "from jsonl"}\n')
    suite, _ = load_suite(write(tmp_path / "eval.yaml", """
        tests:
          - id: inline-1
            input: inline
          - file://cases/*.yaml
          - file://more.jsonl
    """))
    assert [t.id for t in suite.tests] == ["inline-1", "acc-1", "safe-1", "j1"]
    assert [t.user_text for t in suite.tests] == ["inline", "from accuracy", "from safety", "from jsonl"]
    assert suite.tests[2].source_file == str(tmp_path / "cases" / "safety.yaml")
    assert suite.tests[2].source_line == 2


def test_glob_matching_nothing_is_an_error(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - file://cases/*.yaml
    """))
    err = only(errors, ("tests", 0))
    assert "no file matches" in err.message and err.line == 2


def test_missing_referenced_file_is_an_error(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests: ./nope.jsonl
    """))
    assert any("not found" in e.message for e in errors)


def test_file_reference_cycle_detected(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", """
        - id: a
          input: x
        - file://b.yaml
    """)
    write(tmp_path / "b.yaml", """
        - file://a.yaml
    """)
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - file://a.yaml
    """))
    assert len(errors) == 1
    err = errors[0]
    assert "file:// reference cycle" in err.message
    assert "a.yaml -> b.yaml -> a.yaml" in err.message
    assert err.file == str(tmp_path / "b.yaml") and err.line == 1


def test_self_reference_is_a_cycle(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        tests:
          - file://eval.yaml
    """)
    errors = load_errors(f)
    assert "cycle" in only(errors, ("tests", 0)).message


def test_file_outside_package_refused_by_policy(tmp_path: Path) -> None:
    write(tmp_path / "outside.jsonl", '{"input": "secret"}\n')
    f = write(tmp_path / "pkg" / "eval.yaml", """
        tests: ../outside.jsonl
    """)
    errors = load_errors(f, PathPolicy(allowed_roots=(tmp_path / "pkg",)))
    assert any("outside the skill package" in e.message for e in errors)
    # Without a package root the same reference is allowed (seed 001: parent traversal).
    suite, _ = load_suite(f)
    assert suite.tests[0].user_text == "secret"


# ---- errors ----------------------------------------------------------------

def test_duplicate_test_ids(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        tests:
          - id: same
            input: x
          - id: same
            input: y
    """)
    errors = load_errors(f)
    err = only(errors, ("tests", 1, "id"))
    assert "duplicate test id 'same' (first used by test 0)" in err.message
    assert err.line == 4 and err.file == str(f)


def test_duplicate_ids_across_included_files(tmp_path: Path) -> None:
    write(tmp_path / "more.jsonl", '{"id": "x", "input": "b"}\n')
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - id: x
            input: a
          - file://more.jsonl
    """))
    err = only(errors, ("tests", 1, "id"))
    assert err.file == str(tmp_path / "more.jsonl") and err.line == 1


def test_metadata_name_pattern_error(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        name: Bad_Name
        description: ok
        tests:
          - input: x
    """)
    errors = load_errors(f)
    assert len(errors) == 1
    err = errors[0]
    assert err.path == ("name",) and err.line == 1
    assert str(err) == (f"{f}:1: name: invalid name 'Bad_Name' "
                        "(expected 1-64 characters of lowercase letters, digits and hyphens)")


def test_metadata_name_length_error(tmp_path: Path) -> None:
    ok_name = "a" * 64
    suite, _ = load_suite(write(tmp_path / "ok.yaml", f"name: {ok_name}\ndescription: d\ntests:\n  - input: x\n"))
    assert suite.name == ok_name
    errors = load_errors(write(tmp_path / "long.yaml", f"name: {'a' * 65}\ndescription: d\ntests:\n  - input: x\n"))
    assert only(errors, ("name",)).message.startswith("invalid name")


def test_metadata_name_with_trailing_newline_rejected(tmp_path: Path) -> None:
    # `$` in a Python regex also matches before a final newline.
    errors = load_errors(write(tmp_path / "eval.yaml", 'name: "abc\\n"\ndescription: d\ntests:\n  - input: x\n'))
    assert only(errors, ("name",)).message.startswith("invalid name")


def test_name_without_description_loads_with_a_warning(tmp_path: Path) -> None:
    # Seed 001 asks for a description with `name`; AgentV's parser (metadata.ts) does not,
    # and AgentV's own examples rely on it: we follow AgentV and say so in a stored warning.
    suite, warnings = load_suite(write(tmp_path / "eval.yaml", """
        name: good-name
        tests:
          - input: x
    """))
    assert suite.name == "good-name" and suite.description is None
    assert any("has a `name` but no `description`" in w for w in warnings), warnings


def test_name_opens_the_metadata_block_description_alone_is_ordinary(tmp_path: Path) -> None:
    # AgentV's rule: without `name`, `description` and `version` are ordinary suite fields.
    suite, _ = load_suite(write(tmp_path / "eval.yaml", """
        description: What this suite checks
        version: "1.0"
        tests:
          - input: x
    """))
    assert suite.description == "What this suite checks" and suite.version == "1.0"
    assert suite.name == "eval"


def test_description_too_long(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml",
                               f"name: n\ndescription: {'d' * 1025}\ntests:\n  - input: x\n"))
    assert only(errors, ("description",)).expected == "a string of 1-1024 characters"


def test_unknown_top_level_key_with_suggestion(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        tests:
          - input: x
        executoin:
          targets: [a]
    """)
    errors = load_errors(f)
    err = only(errors, ("executoin",))
    assert err.message == "unknown field 'executoin'; did you mean 'execution'?"
    assert err.line == 3
    # an eval.yaml is AgentV's format (formats/compat.py): AgentV would drop the key, so we refuse it
    assert str(err) == (f"{f}:3: executoin: unknown field 'executoin'; did you mean 'execution'? "
                        "(expected AgentV reads 'execution' here and ignores 'executoin')")


def test_unknown_test_key_with_suggestion(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - input: x
            asert:
              - type: contains
                value: x
    """))
    err = only(errors, ("tests", 0, "asert"))
    assert "did you mean 'assert'?" in err.message and err.line == 3


def test_unknown_assert_type(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        tests:
          - input: x
            assert:
              - type: containz
                value: x
    """)
    errors = load_errors(f)
    err = only(errors, ("tests", 0, "assert", 0, "type"))
    assert err.message == "unknown assertion type 'containz'; did you mean 'contains'?"
    assert err.line == 4
    assert err.expected is None  # issue 30: one "did you mean" line, not the list of every type
    assert str(err) == f"{f}:4: tests[0].assert[0].type: unknown assertion type 'containz'; did you mean 'contains'?"


def test_invalid_regex_reported_at_load_time_with_line(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input: x
            assert:
              - type: contains
                value: x
              - type: regex
                value: "(unclosed"
    """)
    errors = load_errors(f)
    err = only(errors, ("tests", 0, "assert", 1))
    assert err.line == 7
    assert "invalid regular expression '(unclosed'" in err.message
    assert str(err).startswith(f"{f}:7: tests[0].assert[1]: invalid regular expression")


def test_invalid_json_schema_reported_at_load_time(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", """
        tests:
          - input: x
            assert:
              - type: json_schema
                schema:
                  type: object
                  properties:
                    n: {type: 12}
    """)
    errors = load_errors(f)
    err = only(errors, ("tests", 0, "assert", 0, "schema"))
    assert err.line == 5
    assert err.message.startswith("invalid JSON Schema at $.properties.n.type")


def test_unknown_assert_field_with_suggestion(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - input: x
            assert:
              - type: contains
                valeu: x
    """))
    err = only(errors, ("tests", 0, "assert", 0, "valeu"))
    assert err.message == "unknown field 'valeu'; did you mean 'value'?" and err.line == 5


def test_required_out_of_range(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - input: x
            assert:
              - type: contains
                value: x
                required: 1.5
    """))
    assert any("within [0, 1]" in e.message for e in errors)


def test_missing_input_and_missing_tests(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "a.yaml", """
        tests:
          - id: no-input
    """))
    assert only(errors, ("tests", 0, "input")).message == "required field is missing"
    errors = load_errors(write(tmp_path / "b.yaml", "description: hi\nname: x\n"))
    assert only(errors, ("tests",)).message == "required field is missing"


def test_all_problems_reported_at_once(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - input: x
            assert:
              - type: regex
                value: "["
          - input: y
            assert:
              - type: nope
        descripton: 1
    """))
    assert {e.path for e in errors} == {("tests", 0, "assert", 0), ("tests", 1, "assert", 0, "type"),
                                        ("descripton",)}


def test_yaml_syntax_error_with_line(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", "tests:\n  - id: a\n    input: x\n\tbad: tab\n")
    errors = load_errors(f)
    assert len(errors) == 1
    err = errors[0]
    assert err.line == 4 and err.message.startswith("invalid YAML:")
    assert str(err).startswith(f"{f}:4: (root): invalid YAML:")


def test_duplicate_yaml_key_is_an_error(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - id: a
            input: x
            input: y
    """))
    err = only(errors, ("tests", 0, "input"))
    assert "duplicate key 'input'" in err.message and err.line == 4


def test_non_utf8_file(tmp_path: Path) -> None:
    f = write(tmp_path / "eval.yaml", b"tests:\n  - input: caf\xe9\n")
    errors = load_errors(f)
    err = errors[0]
    assert err.line == 2 and "not valid UTF-8" in err.message and err.expected == "UTF-8 text"


def test_utf8_bom_accepted(tmp_path: Path) -> None:
    suite, _ = load_suite(write(tmp_path / "eval.yaml", "\ufefftests:\n  - input: ok\n".encode("utf-8")))
    assert suite.tests[0].user_text == "ok"


def test_yaml_alias_bomb_bounded(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    lines.append("tests: [{input: x}]")
    errors = load_errors(write(tmp_path / "eval.yaml", "\n".join(lines) + "\n"))
    assert any("nodes" in e.message for e in errors)


def test_invalid_role_and_empty_input(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        tests:
          - input:
              - role: wizard
                content: x
          - input: []
    """))
    assert only(errors, ("tests", 0, "input", 0, "role")).message == "unknown role 'wizard'"
    assert only(errors, ("tests", 1, "input")).expected == "a string or a non-empty list of messages"


def test_trials_validation(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path / "eval.yaml", """
        execution:
          trials:
            count: 0
        tests:
          - input: x
    """))
    err = only(errors, ("execution", "trials", "count"))
    assert err.line == 3


def test_specerror_str_format_without_line_or_expected() -> None:
    assert str(SpecError("f.yaml", ("tests", 2, "assert", 0, "value"), "bad")) == \
        "f.yaml: tests[2].assert[0].value: bad"
    assert str(SpecError("f.yaml", (), "bad", 3, "good")) == "f.yaml:3: (root): bad (expected good)"
    assert str(SpecErrors([SpecError("a", (), "x", 1), SpecError("b", ("k",), "y", 2)])) == \
        "a:1: (root): x\nb:2: k: y"
