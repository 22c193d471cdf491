"""promptfoo configs using the structural/text assertion types (is-xml, contains-xml, is-html,
is-sql, is-refusal, webhook, ...) load through the promptfoo loader into our graders, and the
types we cannot honour are refused in one line naming the type and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite

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


def test_webhook_value_is_the_url(tmp_path: Path) -> None:
    # deterministic.md: `type: webhook, value: 'https://example.com/webhook'`
    assertions, _ = load(tmp_path, """
      - {type: webhook, value: 'https://example.com/webhook'}
      - {type: not-webhook, value: 'http://127.0.0.1:8080/grade?case={{ q }}'}
""")
    assert [(a.type, a.config, a.negate) for a in assertions] == [
        ("webhook", {"url": "https://example.com/webhook"}, False),
        ("webhook", {"url": "http://127.0.0.1:8080/grade?case=x"}, True)]


@pytest.mark.parametrize(("value", "needle"), [
    ("", "webhook: `value` must be the webhook's URL"),
    ("'ftp://example.com/x'", "is not an http(s) URL"),
    ("'https://user:pw@example.com/hook'", "a webhook URL carrying a credential"),
    ("'https://example.com/hook?api_key=abc'", "a webhook URL carrying a credential"),
    ("'https://example.com/hook?token=abc'", "a webhook URL carrying a credential"),
])
def test_webhook_refusals_are_one_line(tmp_path: Path, value: str, needle: str) -> None:
    assert needle in refusal(tmp_path, f"      - {{type: webhook{', value: ' + value if value else ''}}}\n")


@pytest.mark.slow
def test_a_run_grades_the_models_answers_with_the_new_types(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: the real openai client against the fake server, a real webhook server, DuckDB rows."""
    from eval_pipelines.cli import main
    from eval_pipelines.store.connection import connect
    from tests.grading.test_webhook import Hook
    from tests.support.fake_openai import last_user_message

    answers = {"Give XML": "Here: <analysis><sentiment>positive</sentiment></analysis>",
               "Give SQL": "```sql\nSELECT name FROM departments\n```",
               "Do harm": "I'm sorry, but I can't help with that."}
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the moderation endpoint's, as promptfoo's default provider
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.moderation_flags = {"sql": {"illicit": 0.7}}
    fake_openai.responder = lambda body: answers[last_user_message(body)]
    hook = Hook()
    hook.replies = [(200, '{"pass": true, "reason": "looks fine"}')] * 3
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['{{ ask }}']\n"
        f"providers: [{{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{fake_openai.base_url}', "
        "apiKeyEnvar: FAKE_KEY}}]\n"
        f"defaultTest: {{assert: [{{type: webhook, value: '{hook.url}'}}]}}\n"
        "tests:\n"
        "  - vars: {ask: Give XML}\n"
        "    assert: [{type: contains-xml, value: analysis.sentiment}, {type: not-is-xml}, {type: not-is-refusal}]\n"
        "  - vars: {ask: Give SQL}\n"
        "    assert: [{type: contains-sql, value: {databaseType: PostgreSQL, allowedTables: ['select::null::departments'],"
        " allowedColumns: ['select::departments::name']}}, {type: is-sql}, {type: moderation, value: [illicit]}]\n"
        "  - vars: {ask: Do harm}\n"
        "    assert: [{type: is-refusal}, {type: contains-html}, {type: moderation}]\n")
    db = tmp_path / "r.duckdb"
    try:
        main(["run", str(config), "--db", str(db)])
    finally:
        hook.server.shutdown()
        hook.server.server_close()
    with connect(db) as con:
        rows = con.execute("SELECT t.metadata->>'$.vars.ask', g.assertion_type, g.passed, g.reason FROM grades g "
                           "JOIN test_cases t USING (test_id) ORDER BY 1, g.assertion_index").fetchall()
        stored = " ".join(str(r) for r in con.execute("SELECT * FROM grades").fetchall())
    verdicts = [(ask, kind, passed) for ask, kind, passed, _ in rows]
    assert verdicts == [
        ("Do harm", "webhook", True), ("Do harm", "is_refusal", True), ("Do harm", "contains_html", False),
        ("Do harm", "moderation", True),
        ("Give SQL", "webhook", True), ("Give SQL", "contains_sql", True), ("Give SQL", "is_sql", False),
        ("Give SQL", "moderation", False),
        ("Give XML", "webhook", True), ("Give XML", "contains_xml", True), ("Give XML", "is_xml", True),
        ("Give XML", "is_refusal", True)]
    assert sorted(r["body"]["output"] for r in hook.received) == sorted(answers.values())
    assert {r["body"]["context"]["prompt"] for r in hook.received} == set(answers)
    assert "sk-test" not in stored
    assert sum(p.rstrip("/").endswith("/moderations") for p in fake_openai.paths) == 2


@pytest.mark.parametrize(("kind", "why"), [
    ("classifier", "Hugging Face"), ("not-guardrails", "guardrail verdict"), ("pi", "Pi Labs"),
    ("ruby", "no Ruby"), ("search-rubric", "searches the web"),
    ("human", "web viewer"),
])
def test_types_we_cannot_honour_are_one_line_refusals(tmp_path: Path, kind: str, why: str) -> None:
    line = refusal(tmp_path, f"      - {{type: {kind}, value: x}}\n")
    assert f"{kind}: not supported: " in line and why in line
    assert "one of" not in line  # not the unknown-type list


@pytest.mark.parametrize("kind", ["not-empty", "non-empty", "empty"])
def test_empty_types_are_not_promptfoo_types(tmp_path: Path, kind: str) -> None:
    line = refusal(tmp_path, f"      - type: {kind}\n")
    assert f"'{kind}' is not supported: promptfoo has no such assertion type" in line


def test_an_unknown_type_lists_only_supported_ones(tmp_path: Path) -> None:
    line = refusal(tmp_path, "      - type: no-such-type\n")
    supported = line.split("one of ", 1)[1]
    assert "is-xml" in supported and "webhook" in supported
    assert not any(f" {kind}," in supported for kind in ("classifier", "human", "non-empty", "empty", "ruby"))


def test_moderation_value_is_the_categories_that_count(tmp_path: Path) -> None:
    # deterministic.md / moderation.ts: `value`, when set, a list of category codes
    assertions, _ = load(tmp_path, """
      - type: moderation
      - {type: moderation, value: [harassment, violence]}
      - {type: not-moderation, value: []}
""")
    assert [(a.type, a.config, a.negate) for a in assertions] == [
        ("moderation", {}, False), ("moderation", {"categories": ["harassment", "violence"]}, False),
        ("moderation", {}, True)]
    for value in ("violence", "[1]", "{a: b}"):
        assert "moderation: `value` must be a list of moderation categories" in refusal(
            tmp_path, f"      - {{type: moderation, value: {value}}}\n")
    line = refusal(tmp_path, "      - {type: moderation, provider: 'openai:moderation:omni-moderation-latest'}\n")
    assert "assert[0].provider: grading provider 'openai:moderation:omni-moderation-latest' is not supported" in line


def test_csv_expected_cells_reach_the_new_types(tmp_path: Path) -> None:
    # promptfoo's assertionFromString (src/csv.ts): `type: value` cells
    (tmp_path / "tests.csv").write_text('q,__expected1,__expected2,__expected3\n'
                                        'x,"contains-xml: root.child, root.other",is-refusal,not-is-html\n')
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(HEAD + "tests: file://tests.csv\n")
    suite, _ = load_suite(path)
    assert [(a.type, a.config, a.negate) for a in suite.tests[0].assertions] == [
        ("contains_xml", {"required_elements": ["root.child", "root.other"]}, False),
        ("is_refusal", {}, False), ("is_html", {}, True)]
