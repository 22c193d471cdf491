"""Every query in docs/sql.md runs against the demo database and returns rows.

The demo database is built once per test session, as a user builds it, by
``tests.support.demo`` (shared with the demo, report and browser tests).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.demo import DEMO_TEST_TIMEOUT_S, build_demo_database

from eval_pipelines.store.views import VIEWS, install_views
from eval_pipelines.store.connection import connect

PROJECT = Path(__file__).resolve().parents[2]
SQL_DOC = PROJECT / "docs" / "sql.md"


def documented_queries() -> list[tuple[str, str]]:
    """(heading, statement) for every ```sql block of docs/sql.md."""
    text = SQL_DOC.read_text()
    queries = []
    for match in re.finditer(r"```sql\n(.*?)```", text, re.S):
        headings = re.findall(r"^#+ (.+)$", text[: match.start()], re.M)
        queries.append((headings[-1] if headings else "?", match.group(1).strip()))
    return queries


def test_docs_have_at_least_ten_queries_one_statement_each() -> None:
    queries = documented_queries()
    assert len(queries) >= 10
    for heading, sql in queries:
        body = sql.rstrip().rstrip(";")
        assert ";" not in re.sub(r"'[^']*'", "", body), f"{heading}: one statement per block"
    text = SQL_DOC.read_text()
    for view in ("latest_results", "version_comparison", "metric_history", "failures", "flaky_cases"):
        assert f"`{view}`" in text, view
        assert any(view in sql for _, sql in queries), f"no documented query uses {view}"


def test_documented_views_exist() -> None:
    import duckdb

    con = duckdb.connect(":memory:")
    from eval_pipelines.store.connection import schema_sql

    con.execute(schema_sql())
    install_views(con)
    names = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert set(VIEWS) <= names


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_database(tmp_path_factory)[1]


@pytest.mark.slow
@pytest.mark.timeout(DEMO_TEST_TIMEOUT_S)
@pytest.mark.parametrize("heading, sql", documented_queries(), ids=[h for h, _ in documented_queries()])
def test_documented_query_returns_rows(demo_db: Path, heading: str, sql: str) -> None:
    with connect(demo_db) as con:
        rows = con.execute(sql).fetchall()
    assert rows, f"{heading}: no rows on the demo database"
