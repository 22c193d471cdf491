"""The structural/text graders added for promptfoo's vocabulary (is-xml, contains-xml, is-html,
contains-html, is-sql, contains-sql, is-refusal, webhook): expected verdicts and reasons are
promptfoo's own, from its tests (test/assertions/*.test.ts) and docs (expected-outputs)."""

from __future__ import annotations

import json

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import assertion_from_raw, grade_output
from eval_pipelines.suite.models import Message, TestCase


def grade(raw: dict, output: str):
    case = TestCase(id="t", input=[Message(content="question")])
    return grade_output(assertion_from_raw(raw), GradeInput(case=case, output=output))


VALID_XML = "XML is valid and contains all required elements"

# promptfoo test/assertions/xml.test.ts: well-formed edge cases and what its strict parser rejects.
# (Its `<𐀀>` case is left out: expat reads names of the Basic Multilingual Plane only.)
WELL_FORMED = ["<root/>", "  <root/>\n", "\ufeff<root/>", "\n<!-- before --><root/>",
               "<!-- before --><root/><!-- after -->", "<!DOCTYPE root><root/>",
               '<!DOCTYPE root SYSTEM "weird[name].dtd"><root/>',
               '<?xml version="1.0" standalone="no"?><!DOCTYPE root SYSTEM "entities.dtd"><root>&external;</root>',
               '<root xmlns:ns="http://example.com"><ns:child>Content</ns:child></root>']
MALFORMED = ["<root><child>Content</child></root", "<a></b>", "<a><b></a></b>", "<a>text</a><b>more</b>",
             "<a attr=unquoted>x</a>", "<a/><b/>", "<a/>trailing", "<root><!-- bad -- comment --></root>",
             '<root attr="1" attr="2"/>', "<root>&undefined;</root>", "<!DOCTYPE root><root>&undefined;</root>",
             "<root>\u0001</root>", "", '"<a/>"', "```xml\n<a/>\n```",
             '<?xml version="1.0" standalone="yes"?><!DOCTYPE root SYSTEM "entities.dtd"><root>&external;</root>',
             "<!DOCTYPE><root/>", "<!DOCTYPE 123><root/>", "<!DOCTYPE root junk><root/>",
             "<!DOCTYPE root SYSTEM><root/>", '<!DOCTYPE root SYSTEM "sys.dtd#fragment"><root/>',
             '<!DOCTYPE root PUBLIC "-//x//EN"><root/>', '<!DOCTYPE root PUBLIC "-//x//[invalid]//EN" "sys.dtd"><root/>']
INTERNAL_SUBSETS = ['<!DOCTYPE root [<!ENTITY writer "Donald">]><root>&writer;</root>',
                    '<!DOCTYPE root [<!ENTITY bad "<a>">]><root>&bad;</root>',
                    '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><lolz>&lol2;</lolz>']


@pytest.mark.parametrize("output", WELL_FORMED)
def test_is_xml_accepts_well_formed_documents(output: str) -> None:
    g = grade({"type": "is_xml"}, output)
    assert (g.passed, g.score, g.reason) == (True, 1.0, VALID_XML)


@pytest.mark.parametrize("output", MALFORMED)
def test_is_xml_rejects_what_a_strict_parser_rejects(output: str) -> None:
    g = grade({"type": "is_xml"}, output)
    assert (g.passed, g.score) == (False, 0.0) and g.reason.startswith("XML parsing failed"), g.reason


@pytest.mark.parametrize("output", INTERNAL_SUBSETS)
def test_is_xml_refuses_internal_subsets_so_no_entity_is_expanded(output: str) -> None:
    g = grade({"type": "is_xml"}, output)
    assert (g.passed, g.reason) == (False, "DTD internal subsets are not supported by is-xml validation")


def test_is_xml_required_elements_are_dotted_paths() -> None:
    doc = "<analysis><classification>T-shirt</classification><color>Red</color></analysis>"
    assert grade({"type": "is_xml", "required_elements": ["analysis.classification", "analysis.color"]}, doc).passed
    g = grade({"type": "is_xml", "required_elements": ["analysis.classification", "analysis.style"]}, doc)
    assert (g.passed, g.reason, g.details["missing"]) == (
        False, "XML is missing required elements: analysis.style", ["analysis.style"])
    repeated = "<root><item><name>First</name></item><item><name>Second</name></item></root>"
    assert grade({"type": "is_xml", "required_elements": ["root.item.0.name", "root.item.1.name"]}, repeated).passed
    assert not grade({"type": "is_xml", "required_elements": ["root.item.2.name"]}, repeated).passed
    assert not grade({"type": "is_xml", "required_elements": ["root.item.name"]}, repeated).passed  # a list: indices
    empty = "<root><emptyChild></emptyChild><c>x</c></root>"
    assert grade({"type": "is_xml", "required_elements": ["root.emptyChild", "root.c"]}, empty).passed
    assert not grade({"type": "is_xml", "required_elements": ["root.c.deeper"]}, empty).passed  # text has no children
    cdata = "<root><child><![CDATA[<p>This is CDATA content</p>]]></child></root>"
    assert grade({"type": "is_xml", "required_elements": ["root.child"]}, cdata).passed
    pis = '<?xml version="1.0" encoding="UTF-8"?><?xml-stylesheet type="text/xsl" href="s.xsl"?><root><child/></root>'
    assert grade({"type": "is_xml", "required_elements": ["root.child"]}, pis).passed
    assert grade({"type": "is_xml", "required_elements": ["root.child.@_id"]}, '<root><child id="1"/></root>').passed


def test_is_xml_negated() -> None:
    assert grade({"type": "is_xml", "negate": True}, "plain text").passed
    assert not grade({"type": "is_xml", "negate": True}, "<root/>").passed


@pytest.mark.parametrize(("output", "required", "passed"), [
    ("Some text <root><child>Content</child></root> more text", None, True),
    ("Text <root><child>Content</child></root> more", ["root.child"], True),
    ("Text <root><item><name>First</name></item><item><name>Second</name></item></root> more",
     ["root.item.1.name"], True),
    ("<root1>Content</root1> text <root2><child>More</child></root2>", ["root2.child"], True),
    ("<xml1>content1</xml1> more text <xml2>content2</xml2>", ["xml1", "xml2"], True),  # a run of siblings
    ("Text <unclosed><root><child>Content</child></root>", ["root.child"], True),
    ("Text <élément>Content</élément> more", ["élément"], True),
    ("<root><!-- </root> --><child>Content</child></root>", ["root.child"], True),
    ("<root><![CDATA[</root>]]><child>Content</child></root>", ["root.child"], True),
    ("Text <wrapper><root><child>Content</child></root></wrapper>", ["root.child"], False),  # root-relative
    ("Text <root><child>Content</child></root> more", ["root.missing"], False),
    ("<a>" * 1000 + "</a>" * 1000, ["a.missing"], False),
])
def test_contains_xml_finds_fragments_as_promptfoo_does(output: str, required: list[str] | None,
                                                         passed: bool) -> None:
    g = grade({"type": "contains_xml", "required_elements": required}, output)
    assert g.passed is passed
    if passed:
        assert g.reason == VALID_XML
    else:
        assert g.reason == "No valid XML content found matching the requirements"


@pytest.mark.parametrize("output", ["This is just plain text", "<a" * 5000, "<!--" * 10000, "2 < 3 and 4 > 1"])
def test_contains_xml_without_fragments(output: str) -> None:
    g = grade({"type": "contains_xml"}, output)
    assert (g.passed, g.reason) == (False, "No XML content found in the output")
    assert grade({"type": "contains_xml", "negate": True}, output).passed


# promptfoo test/assertions/html.test.ts
CONTAINS_HTML = ['<p>paragraph</p>', '<a href="link">text</a>', '<img src="image.jpg" />', '<h1>heading</h1>',
                 '<!DOCTYPE html><html><head><title>Test</title></head><body>Content</body></html>',
                 'Some text with <strong>emphasis</strong> in it', '<input type="text" value="test" />', '<br />',
                 '<table><tr><td>cell</td></tr></table>', '<p>Multiple &nbsp; HTML &lt; entities &gt;</p>',
                 '<custom-element attr="value">Web component</custom-element>', '<div>&nbsp;</div>',
                 '<!-- comment --><span>text</span>', '<br/><hr/>', 'Text with <b>bold</b> and <i>italic</i>']
NOT_HTML = ['Just plain text', '2 < 3 and 4 > 1', 'email@example.com', 'Math: a < b > c', '< div >',
            'Generic <example> text', 'if (a<b) { return c>d; }', 'The price is <$50', 'Email me at <john@example.com>',
            '<custom>', '&amp;', '<!-- comment -->']


@pytest.mark.parametrize("output", CONTAINS_HTML)
def test_contains_html_counts_promptfoos_indicators(output: str) -> None:
    g = grade({"type": "contains_html"}, output)
    assert (g.passed, g.score) == (True, 1.0) and g.details["indicators"] >= 2


@pytest.mark.parametrize("output", NOT_HTML)
def test_contains_html_avoids_promptfoos_false_positives(output: str) -> None:
    g = grade({"type": "contains_html"}, output)
    assert (g.passed, g.reason) == (False, "Expected output to contain HTML content")
    assert grade({"type": "contains_html", "negate": True}, output).passed


@pytest.mark.parametrize("output", [
    '<div>Hello World</div>', '<!DOCTYPE html><html><head><title>Test</title></head><body>Content</body></html>',
    '<p>Simple paragraph</p>', '<div><span>Nested</span></div>', '<img src="test.jpg" />', '<br />',
    '<div class="test" id="main">Content</div>', '  <div>With whitespace</div>  ', '<h1>Title</h1><p>Paragraph</p>',
    '<ul><li>Item 1</li><li>Item 2</li></ul>', '<form><input type="text" /><button>Submit</button></form>'])
def test_is_html_accepts_documents_and_fragments(output: str) -> None:
    g = grade({"type": "is_html"}, output)
    assert (g.passed, g.reason) == (True, "Output is valid HTML")
    assert not grade({"type": "is_html", "negate": True}, output).passed


@pytest.mark.parametrize(("output", "reason"), [
    ("Just plain text", "Output must be wrapped in HTML tags"),
    ("Some text with <strong>HTML</strong> inside", "Output must be wrapped in HTML tags"),
    ("Text before <div>HTML</div>", "Output must be wrapped in HTML tags"),
    ("<div>HTML</div> Text after", "Output must be wrapped in HTML tags"),
    ("Text <br /> more text", "Output must be wrapped in HTML tags"),
    ('<?xml version="1.0"?><root>XML</root>', "Output appears to be XML, not HTML"),
    ("", "Output is empty"), ("   ", "Output is empty"),
    ("<notarealtag>", "Output does not contain recognized HTML elements"),
    ("2 < 3 and 4 > 1", "Output must be wrapped in HTML tags"),
])
def test_is_html_rejects_with_promptfoos_reasons(output: str, reason: str) -> None:
    g = grade({"type": "is_html"}, output)
    assert (g.passed, g.score, g.reason) == (False, 0.0, reason)
    assert grade({"type": "is_html", "negate": True}, output).passed


# promptfoo test/assertions/sql.test.ts (default database MySQL); the cases its node-sql-parser
# grammar rejects and sqlglot's accepts are in SQL_MORE_PERMISSIVE, measured, not asserted away.
NOT_MYSQL = "SQL statement does not conform to the provided MySQL database syntax."


@pytest.mark.parametrize(("output", "value"), [
    ("SELECT id, name FROM users", {}), ("SELECT DISTINCT name FROM users", {}), ("select distinct id from users", {}),
    ("SELECT SQL_NO_CACHE name FROM users", {}), ("SELECT DISTINCT SQL_NO_CACHE name FROM users", {}),
    ('SELECT DISTINCT "display name" FROM users', {"database_type": "PostgreSQL"}),
    ("SELECT 'select distinct first_name last_name from employees' AS sample", {}),
    ("SELECT 1 /* select distinct first_name last_name from employees */", {}),
    ("SELECT 1 -- select distinct first_name last_name from employees\n", {}),
    ('SELECT "select distinct first_name last_name from employees" AS sample', {"database_type": "PostgreSQL"}),
    ("SELECT $$select distinct first_name last_name from employees$$ AS sample", {"database_type": "PostgreSQL"}),
    ("SELECT * FROM `employees` WHERE `id` = 1", {}),
    ("SELECT first_name, last_name FROM employees WHERE first_name ILIKE 'john%'", {"database_type": "PostgreSQL"}),
])
def test_is_sql_accepts_promptfoos_valid_statements(output: str, value: dict) -> None:
    g = grade({"type": "is_sql", **value}, output)
    assert (g.passed, g.score) == (True, 1.0), g.reason
    assert not grade({"type": "is_sql", "negate": True, **value}, output).passed


@pytest.mark.parametrize("output", [
    "SELECT a b FROM t", "SELECT DISTINCT first_name last_name FROM employees",  # likely missing commas
    "SELECT SQL_NO_CACHE first_name last_name FROM employees", "SELECT DISTINCTIVE name FROM users",
    "SELECT first_name last_name FROM employees", "SELECT col1 col2 col3 FROM table1",
    "", "   ", "SELECT * FROM orders ORDERY BY order_date", "SELECT * FROM `employees", "SELECT `id, `name FROM `users",
])
def test_is_sql_rejects_promptfoos_invalid_statements(output: str) -> None:
    g = grade({"type": "is_sql"}, output)
    assert (g.passed, g.score, g.reason) == (False, 0.0, NOT_MYSQL)
    assert grade({"type": "is_sql", "negate": True}, output).passed


SQL_MORE_PERMISSIVE = [  # promptfoo fails these (node-sql-parser); sqlglot's grammars accept them
    ("SELECT * FROM select WHERE id = 1", "MySQL"), ("DELETE employees WHERE id = 1", "MySQL"),
    ("SELECT first_name, last_name FROM employees WHERE first_name ILIKE 'john%'", "MySQL"),
    ("SELECT generate_series(1, 10);", "MySQL"),
    ("SELECT * FROM employees WHERE id = 1 LOCK IN SHARE MODE", "PostgreSQL"),
]


@pytest.mark.parametrize(("output", "database"), SQL_MORE_PERMISSIVE)
def test_is_sql_known_differences_from_node_sql_parser(output: str, database: str) -> None:
    # Documented in docs/assertions.md (is_sql); if sqlglot grows stricter this test says so.
    assert grade({"type": "is_sql", "database_type": database}, output).passed


def test_is_sql_dialect_decides() -> None:
    top = "SELECT TOP 1 * FROM t"  # T-SQL's row limit
    assert grade({"type": "is_sql", "database_type": "TransactSQL"}, top).passed
    assert (grade({"type": "is_sql"}, top).reason, grade({"type": "is_sql", "database_type": "PostgreSQL"}, top).reason) \
        == (NOT_MYSQL, "SQL statement does not conform to the provided PostgreSQL database syntax.")
    assert grade({"type": "is_sql"}, "SELECT * FROM `t`").passed
    assert not grade({"type": "is_sql", "database_type": "postgresql"}, "SELECT * FROM `t`").passed  # names: any case


@pytest.mark.parametrize(("output", "value", "reason"), [
    ("SELECT * FROM employees", {"allowed_tables": ["(select|update|insert|delete)::null::departments"]},
     "SQL references unauthorized table(s). Found: [select::null::employees]. "
     "Allowed: [(select|update|insert|delete)::null::departments]."),
    ("SELECT * FROM departments", {"allowed_tables": ["(select|update|insert|delete)::null::departments"]}, None),
    ("SELECT id FROM t", {"allowed_columns": ["select::null::name", "update::null::id"]},
     "SQL references unauthorized column(s). Found: [select::null::id]. "
     "Allowed: [select::null::name, update::null::id]."),
    ("INSERT INTO department (dept_name, location) VALUES ('Sales', 'New York')",
     {"allowed_columns": ["insert::department::dept_name", "insert::department::location"]}, None),
    ("UPDATE a SET id = 1", {"allowed_columns": ["update::a::id"]}, None),
    ("UPDATE employee SET salary = 50000 WHERE id = 1",
     {"allowed_columns": ["update::employee::salary", "select::employee::id"]}, None),
    ("SELECT name FROM employees", {"allowed_columns": ["select::employees::name"]}, None),
    ("SELECT * FROM data_table WHERE id = 1", {"allowed_tables": ["select::null::data_table"]}, None),
    ("SELECT * FROM data WHERE id = 1", {"allowed_tables": ["select::null::data_table"]},
     "SQL references unauthorized table(s). Found: [select::null::data]. Allowed: [select::null::data_table]."),
    ('SELECT * FROM "data_table" WHERE id = 1', {"database_type": "PostgreSQL",
                                                 "allowed_tables": ["select::null::data_table"]}, None),
    ("SELECT u.name, p.title FROM users u, posts p WHERE u.id = p.user_id", {"allowed_tables": ["select::null::users"]},
     "SQL references unauthorized table(s). Found: [select::null::posts]. Allowed: [select::null::users]."),
    ("SELECT u.name FROM users u", {"allowed_columns": ["select::users::name"]}, None),  # the alias resolved
    ("SELECT * FROM users", {"allowed_columns": ["select::users::name"]},
     "SQL references unauthorized column(s). Found: [select::null::(.*)]. Allowed: [select::users::name]."),
])
def test_is_sql_allow_lists(output: str, value: dict, reason: str | None) -> None:
    g = grade({"type": "is_sql", **value}, output)
    assert g.passed is (reason is None), g.reason
    if reason:
        assert g.reason == reason


def test_contains_sql_reads_the_first_fence() -> None:
    assert grade({"type": "contains_sql"}, "Result:\n```sql\nSELECT DISTINCT name FROM users\n```").passed
    assert grade({"type": "contains_sql"}, "SELECT id FROM users").passed  # no fence: the whole output
    g = grade({"type": "contains_sql"}, "Here it is:\n```\nSELEC id FROM users\n```")
    assert (g.passed, g.reason) == (False, NOT_MYSQL)
    assert not grade({"type": "contains_sql"}, "Here is the query: SELECT id FROM users").passed
    assert grade({"type": "contains_sql", "negate": True}, "no sql here, just words").passed


def test_is_sql_bad_parameters_are_error_grades() -> None:
    # (the loader refuses them first: tests/formats/test_promptfoo_text_types.py)
    for raw, needle in (({"type": "is_sql", "database_type": "DB2"}, "databaseType 'DB2' is not supported"),
                        ({"type": "is_sql", "allowed_tables": ["(select"]}, "'(select' is not a regular expression")):
        g = grade(raw, "SELECT 1")
        assert (g.status, g.passed) == ("error", False) and needle in g.reason


# promptfoo src/redteam/util.ts isBasicRefusal and its docs' examples (is-refusal)
@pytest.mark.parametrize("output", [
    "I cannot help with that.", "I'm unable to provide that information.", "I am not able to do this.",
    "It is illegal to do that.", "I\u2019m unable to assist with hacking.",  # a curly apostrophe
    "Sorry, but I can't do that.", "I apologize, but that request cannot be fulfilled.", "Sorry, no.",
    "I'm sorry, I must decline.", "My apologies, but it's not possible.",
    "As an AI, I don't have opinions.", "That is not appropriate for me to write.",
    "Well... I won't write malware.", "", "   \n",
])
def test_is_refusal_recognises_promptfoos_refusals(output: str) -> None:
    g = grade({"type": "is_refusal"}, output)
    assert (g.passed, g.score) == (True, 1.0), g.reason
    assert not grade({"type": "is_refusal", "negate": True}, output).passed


@pytest.mark.parametrize("output", [
    "The capital of France is Paris.", "Here is the recipe you asked for.",
    "As an airbnb host, you should clean the flat.",  # whole words: "as an ai" is not inside "airbnb"
    "I'm sorry, imagine how hard that was for you.",  # sympathy, not a refusal
    "Sorry for the delay: here is the answer.", "Yes, I can help with that.",
])
def test_is_refusal_leaves_answers_alone(output: str) -> None:
    g = grade({"type": "is_refusal"}, output)
    assert (g.passed, g.reason) == (False, "Expected output to be a refusal")
    assert grade({"type": "is_refusal", "negate": True}, output).passed


def test_is_refusal_phrases_anywhere_count_as_promptfoo_counts_them() -> None:
    # promptfoo's substring list holds "cannot help": even in a sentence that is not a refusal.
    assert grade({"type": "is_refusal"}, "You cannot help it sometimes.").details["matched"] == "contains 'cannot help'"


@pytest.mark.parametrize("output", ["hello world", "name", "1 + 2", "```sql\nSELECT id FROM users\n```"])
def test_is_sql_needs_a_statement(output: str) -> None:
    # sqlglot reads these as bare expressions, not statements; node-sql-parser fails them
    assert grade({"type": "is_sql"}, output).reason == NOT_MYSQL


def test_is_xml_never_reads_an_external_dtd(tmp_path) -> None:  # noqa: ANN001
    from eval_pipelines.grading.graders import _xml

    dtd = tmp_path / "secret.dtd"
    dtd.write_text('<!ENTITY leak "SECRET-FROM-DISK">')
    doc = f'<?xml version="1.0"?><!DOCTYPE root SYSTEM "{dtd.as_uri()}"><root><a>&leak;</a></root>'
    assert grade({"type": "is_xml", "required_elements": ["root.a"]}, doc).passed  # as promptfoo: not loaded
    assert "SECRET" not in json.dumps(_xml.parse(doc, True))
