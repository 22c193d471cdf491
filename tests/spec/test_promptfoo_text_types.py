"""promptfoo configs using the structural/text assertion types (is-xml, contains-xml, is-html,
is-sql, is-refusal, webhook, ...) load through the promptfoo loader into our graders, and the
types we cannot honour are refused in one line naming the type and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loader import load_suite

HEAD = "prompts: ['{{ q }}']\nproviders: [echo]\n"


def load(tmp_path: Path, asserts: str):
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(HEAD + "tests:\n  - vars: {q: x}\n    assert:\n" + asserts)
    suite, warnings = load_suite(path)
    return suite.tests[0].assertions, warnings


def refusal(tmp_path: Path, asserts: str) -> str:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, asserts)
    assert "Traceback" not in str(caught.value)
    lines = str(caught.value).splitlines()
    return lines[0]


def test_xml_types_take_promptfoos_three_forms_of_required_elements(tmp_path: Path) -> None:
    # site/docs/configuration/expected-outputs/deterministic.md: a comma string, a list, {requiredElements}
    assertions, warnings = load(tmp_path, """
      - type: is-xml
      - {type: is-xml, value: 'analysis.classification, analysis.color'}
      - {type: contains-xml, value: [analysis.classification, analysis.color]}
      - {type: not-contains-xml, value: {requiredElements: [root.child]}}
""")
    assert [(a.type, a.config.get("required_elements"), a.negate) for a in assertions] == [
        ("is_xml", None, False),
        ("is_xml", ["analysis.classification", "analysis.color"], False),
        ("contains_xml", ["analysis.classification", "analysis.color"], False),
        ("contains_xml", ["root.child"], True)]
    assert warnings == []


@pytest.mark.parametrize("value", ["{other: [a]}", "3", "{requiredElements: a}"])
def test_xml_value_of_another_form_is_one_line(tmp_path: Path, value: str) -> None:
    line = refusal(tmp_path, f"      - {{type: is-xml, value: {value}}}\n")
    assert "is-xml: `value` must be the required elements" in line


def test_html_types_read_no_value(tmp_path: Path) -> None:
    assertions, warnings = load(tmp_path, """
      - type: is-html
      - {type: not-contains-html, value: ignored}
""")
    assert [(a.type, a.config, a.negate) for a in assertions] == [("is_html", {}, False), ("contains_html", {}, True)]
    assert len(warnings) == 1 and "assert.1.value: accepted but not used (not-contains-html reads no value)" in warnings[0]


def test_sql_types_take_database_type_and_allow_lists(tmp_path: Path) -> None:
    # deterministic.md's is-sql example: databaseType MySQL, allowedTables / allowedColumns
    assertions, warnings = load(tmp_path, """
      - type: is-sql
      - type: is-sql
        value:
          databaseType: MySQL
          allowedTables: ['(select|update|insert|delete)::null::departments']
          allowedColumns: ['select::null::name', 'update::null::id']
      - {type: not-contains-sql, value: {databaseType: PostgreSQL}}
""")
    assert [(a.type, a.config, a.negate) for a in assertions] == [
        ("is_sql", {}, False),
        ("is_sql", {"database_type": "MySQL", "allowed_tables": ["(select|update|insert|delete)::null::departments"],
                    "allowed_columns": ["select::null::name", "update::null::id"]}, False),
        ("contains_sql", {"database_type": "PostgreSQL"}, True)]
    assert warnings == []


@pytest.mark.parametrize(("value", "needle"), [
    ("SELECT", "is-sql: `value` must be a mapping {databaseType, allowedTables, allowedColumns}"),
    ("{databaseType: DB2}", "is-sql: `value.databaseType 'DB2' is not supported"),
    ("{databaseType: MySQL, tables: [a]}", "is-sql: `value` has unknown field(s) tables"),
    ("{allowedTables: users}", "is-sql: `value.allowedTables` must be a list"),
    ("{allowedColumns: ['(select']}", "'(select' is not a regular expression"),
])
def test_sql_value_that_cannot_be_honoured_is_one_line(tmp_path: Path, value: str, needle: str) -> None:
    assert needle in refusal(tmp_path, f"      - {{type: is-sql, value: {value}}}\n")


def test_is_refusal_loads(tmp_path: Path) -> None:
    # promptfoo: `is-refusal` and its negation `not-is-refusal`, no value
    assertions, warnings = load(tmp_path, "      - type: is-refusal\n      - type: not-is-refusal\n")
    assert [(a.type, a.config, a.negate) for a in assertions] == [("is_refusal", {}, False), ("is_refusal", {}, True)]
    assert warnings == []


def test_model_graded_factuality_is_factuality(tmp_path: Path) -> None:
    # promptfoo src/assertions/index.ts maps both names to handleFactuality
    assertions, _ = load(tmp_path, """
      - {type: factuality, value: Paris is the capital of France}
      - {type: model-graded-factuality, value: Paris is the capital of France}
      - {type: not-model-graded-factuality, value: Paris is the capital of France, threshold: 0.7}
""")
    plain, alias, negated = assertions
    assert (alias.type, alias.config) == (plain.type, plain.config) and "Paris" in alias.config["rubric"]
    assert plain.type == "llm_judge"
    assert negated.negate and negated.config["threshold"] == 0.7
