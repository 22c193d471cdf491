"""SQL views users can rely on (documented in docs/sql.md).

``install_views(con)`` creates or replaces every view of ``views.sql`` on an
open read-write connection. The views only read the store's tables, so
installing them is cheap and safe to repeat. ``ensure_views(con)`` installs
them only when they are missing or views.sql changed (a one-row marker view
holds the hash of views.sql), so the store's ``connect`` can call it on every
read-write connection for about a millisecond.
"""

from __future__ import annotations

import hashlib
import re
import time
from functools import lru_cache
from importlib import resources

import duckdb

# In dependency order (a view only reads the ones before it).
VIEWS = ("version_order", "latest_results", "version_baselines", "version_comparison",
         "metric_history", "failures", "flaky_cases")


@lru_cache(maxsize=1)
def views_sql() -> str:
    return resources.files("eval_pipelines.store").joinpath("views.sql").read_text()


def statements() -> list[str]:
    """The CREATE OR REPLACE VIEW statements of views.sql, in order."""
    parts = re.split(r"^;;[ \t]*$", views_sql(), flags=re.M)
    return [p.strip() for p in parts if re.search(r"\bCREATE\b", p)]


MARKER_VIEW = "eval_pipelines_views_version"


@lru_cache(maxsize=1)
def views_hash() -> str:
    return hashlib.sha256(views_sql().encode()).hexdigest()[:16]


def install_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create or replace the report views in one transaction; returns their names."""
    try:
        con.execute("BEGIN TRANSACTION")
    except duckdb.TransactionException:  # the caller's transaction: create inside it
        _create(con)
        return list(VIEWS)
    try:
        _create(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return list(VIEWS)


def _create(con: duckdb.DuckDBPyConnection) -> None:
    for statement in statements():
        con.execute(statement)
    con.execute(f"CREATE OR REPLACE VIEW {MARKER_VIEW} AS SELECT '{views_hash()}' AS views_sha256")


def marker(con: duckdb.DuckDBPyConnection, view: str) -> str | None:
    """The hash a one-row marker view holds (schema, report views), or None when it is missing."""
    try:
        rows = con.execute(f"SELECT * FROM {view}").fetchall()  # all: leave no open result
    except duckdb.Error:
        return None
    return rows[0][0] if rows else None


def _installed(con: duckdb.DuckDBPyConnection) -> bool:
    return marker(con, MARKER_VIEW) == views_hash()


def ensure_views(con: duckdb.DuckDBPyConnection, attempts: int = 20) -> bool:
    """Install the views unless this views.sql is already installed; True when it installed them.

    Safe from several connections at once: the views appear together (one
    transaction), and a connection that loses the race waits for the winner's.
    """
    from eval_pipelines.store.postgres import PostgresConnection

    if isinstance(con, PostgresConnection):  # installed with the schema (views_postgres.sql)
        return False
    for attempt in range(attempts):
        if _installed(con):
            return False
        try:
            install_views(con)
            return True
        except duckdb.TransactionException:
            if attempt == attempts - 1:
                raise
            time.sleep(0.01 * (attempt + 1))  # another connection is installing them right now
    return False
