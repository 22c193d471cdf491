"""Every query in docs/sql.md runs against the demo database and returns rows.

The demo database is built once per test session, as a user builds it:
``eval-pipelines --root <copy of the project> demo --db <tmp>/db.duckdb`` in a
subprocess, with DAGSTER_HOME in the copy and no model credentials in the
environment. Other slow tests (reports, the browser check) reuse it through
``build_demo_database``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eval_pipelines.store.views import VIEWS, install_views
from eval_pipelines.store.connection import connect

PROJECT = Path(__file__).resolve().parents[2]
SQL_DOC = PROJECT / "docs" / "sql.md"


def build_demo_database(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(project root, DuckDB path) of the demo, built on first use in this session's temp folder."""
    base = tmp_path_factory.getbasetemp() / "demo-for-reports"
    root, db, done = base / "project", base / "demo.duckdb", base / "done"
    if done.is_file():
        return root, db
    if base.exists():
        shutil.rmtree(base)
    root.mkdir(parents=True)
    shutil.copytree(PROJECT / "skills", root / "skills", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT / "datasets", root / "datasets")
    for name in ("targets.yaml", "dagster.yaml"):
        shutil.copy(PROJECT / name, root / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVAL_PIPELINES_", "DAGSTER_", "OPENAI_"))}
    env["DAGSTER_HOME"] = str(root)
    proc = subprocess.run(
        [sys.executable, "-m", "eval_pipelines.cli", "--root", str(root), "demo", "--db", str(db)],
        cwd=root, env=env, capture_output=True, text=True, timeout=280,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with connect(db) as con:
        install_views(con)
    done.write_text("ok\n")
    return root, db


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
@pytest.mark.timeout(400)
@pytest.mark.parametrize("heading, sql", documented_queries(), ids=[h for h, _ in documented_queries()])
def test_documented_query_returns_rows(demo_db: Path, heading: str, sql: str) -> None:
    with connect(demo_db) as con:
        rows = con.execute(sql).fetchall()
    assert rows, f"{heading}: no rows on the demo database"
