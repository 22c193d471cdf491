"""Write and read the results database.

The store is a DuckDB file (the embedded default) or, when the connection
string is ``postgresql://...``, a PostgreSQL database for many writers
(``store/postgres.py``, same tables, views, rows and reports).

Each stage writes its partition in one transaction: delete the partition's
rows, insert the new ones, commit. Readers never see a half-written partition,
and a re-run replaces exactly that partition (design notes: the DuckDB IO
manager's delete-then-insert is not atomic and fails on a dynamic
multi-partition, so we write ourselves).

DuckDB admits one read-write process per file. Opening retries with backoff
while another process holds the lock, so concurrent runs wait instead of
failing; connections are held only for the short read or write.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import random
import sys
import time
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import duckdb

from eval_pipelines.store import postgres
from eval_pipelines.store.partition import Partition
from eval_pipelines.store.views import ensure_views, marker

if TYPE_CHECKING:  # frames are read and written here; pandas is imported by whoever builds or reads them
    import pandas as pd

_log = logging.getLogger(__name__)

__all__ = ["db_errors", "DatabaseBusy", "Partition", "TABLES", "connect", "insert_frame", "insert_ignoring_existing",
           "none_if_missing", "read_partition", "replace_partition", "replace_partitions", "schema_sql",
           "upsert_ratings"]

LOCK_WAIT_S = 120.0
TABLES = ("suites", "datasets", "test_cases", "model_outputs", "grades", "test_results", "metrics",
          "case_metrics", "regressions", "uplifts", "trigger_results",
          "blind_comparisons")


def db_errors() -> tuple[type[BaseException], ...]:
    """What a failed statement raises, whichever store is behind the connection.

    psycopg is counted only once something imported it (the Postgres store did):
    importing it here cost ~0.25 s at every start, and a store that never loaded
    it cannot raise its errors."""
    psycopg = sys.modules.get("psycopg")
    return (duckdb.Error,) if psycopg is None else (duckdb.Error, psycopg.Error)


def __getattr__(name: str) -> Any:
    if name == "DB_ERRORS":  # the tuple under its former name, as of now
        return db_errors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _configured_wait() -> float:
    try:
        value = float(os.environ.get("EVAL_PIPELINES_DB_WAIT_S", LOCK_WAIT_S))
    except ValueError:
        return LOCK_WAIT_S
    return value if 0 <= value < float("inf") else LOCK_WAIT_S


class DatabaseBusy(RuntimeError):
    """Another process held the DuckDB file for longer than we were willing to wait."""


def none_if_missing(value: Any) -> Any:
    """A value read back through pandas, with NaN/NA (DuckDB NULL) turned into None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    pandas = sys.modules.get("pandas")  # pandas' NA exists only once something imported pandas
    return None if pandas is not None and value is pandas.NA else value


@lru_cache(maxsize=1)
def schema_sql() -> str:
    return resources.files("eval_pipelines.store").joinpath("schema.sql").read_text()


SCHEMA_MARKER = "eval_pipelines_schema_version"


@lru_cache(maxsize=1)
def schema_hash() -> str:
    return hashlib.sha256(schema_sql().encode()).hexdigest()[:16]


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Apply schema.sql unless this file already has this very version of it.

    Running the ~20 idempotent statements costs about 10 ms, on every one of
    the two dozen connections a run opens; a one-row marker view holding the
    hash of schema.sql turns that into one lookup.
    """
    if marker(con, SCHEMA_MARKER) == schema_hash():
        return
    con.execute(schema_sql())
    con.execute(f"CREATE OR REPLACE VIEW {SCHEMA_MARKER} AS SELECT '{schema_hash()}' AS hash")


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text or "conflicting" in text or "being used by another process" in text


@contextmanager
def connect(path: str | Path, *, read_only: bool = False,
            wait_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with the schema applied; waits while another process holds the file.

    The wait is bounded (``wait_s``, default ``EVAL_PIPELINES_DB_WAIT_S`` or 120 s)
    and announced once as a warning, then ends in :class:`DatabaseBusy`.
    """
    if postgres.is_postgres(path):  # many writers: the server takes turns, no file lock to wait on
        pg = postgres.open_connection(str(path), schema_sql(), read_only=read_only)
        try:
            yield pg
        finally:
            pg.close()
        return
    if wait_s is None:
        wait_s = _configured_wait()
    target = str(path)
    if not target.startswith("md:") and target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(target, read_only=read_only)
            break
        except duckdb.Error as exc:
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                if _is_lock_error(exc):
                    raise DatabaseBusy(f"database {target} is busy (another process had it open for "
                                       f"writing for more than {wait_s:.3g} s); retry later") from None
                raise
            if delay == 0.05:
                _log.warning("database %s is held by another process; waiting up to %.3g s", target, wait_s)
            time.sleep(delay + random.uniform(0, delay))
            # Holders keep the file for short reads and writes (tens of ms): a wait of up to 2 s
            # left the nightly batch's 4 concurrent runs idle half the time (benchmarks-nightly.md).
            delay = min(delay * 2, 0.25)
    try:
        if not read_only:
            ensure_schema(con)
            ensure_views(con)  # the documented SQL views (latest_results, version_comparison, ...)
        yield con
    finally:
        con.close()


def replace_partition(con: Any, table: str, partition: Partition, rows: pd.DataFrame) -> int:
    """Atomically replace one partition's rows of ``table``; returns rows written."""
    return replace_partitions(con, partition, {table: rows})[table]


def replace_partitions(con: Any, partition: Partition,
                       frames: dict[str, pd.DataFrame | Iterable[pd.DataFrame]]) -> dict[str, int]:
    """Replace the partition's rows of every table in ``frames`` in one transaction (a stage
    writing two tables, metrics and case_metrics, never leaves one of them written alone).

    A table's rows may come as batches (an iterator of frames, made as they are written: a
    100,000-case table's rows need not all be in memory at once)."""
    import pandas as pd  # already imported by whoever made the frames

    for table in frames:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
    if isinstance(con, postgres.PostgresConnection):
        return con.replace_partitions(partition, {table: _one_frame(rows) for table, rows in frames.items()})
    written: dict[str, int] = {}
    con.execute("BEGIN TRANSACTION")
    try:
        for table, rows in frames.items():
            con.execute(f"DELETE FROM {table} WHERE eval_date = ? AND skill_version = ?",
                        [partition.eval_date, partition.skill_version])
            written[table] = 0
            for batch in (_slices(rows) if isinstance(rows, pd.DataFrame) else rows):
                if len(batch):
                    insert_frame(con, table, batch)
                written[table] += len(batch)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return written


# Rows DuckDB converts in one INSERT: a 800,000-row case_metrics frame inserted whole took
# ~35 MB more for a moment than in slices of this size.
INSERT_BATCH_ROWS = 50_000


def _slices(rows: pd.DataFrame) -> Iterator[pd.DataFrame]:
    if len(rows) <= INSERT_BATCH_ROWS:
        yield rows
        return
    for start in range(0, len(rows), INSERT_BATCH_ROWS):
        yield rows.iloc[start:start + INSERT_BATCH_ROWS]


def _one_frame(rows: pd.DataFrame | Iterable[pd.DataFrame]) -> pd.DataFrame:
    import pandas as pd

    if isinstance(rows, pd.DataFrame):
        return rows
    batches = list(rows)
    return pd.concat(batches, ignore_index=True) if len(batches) > 1 else batches[0]


def insert_ignoring_existing(con: Any, table: str, rows: pd.DataFrame, key: str) -> None:
    """Insert the rows whose ``key`` is not stored yet; a stored key keeps its row."""
    if isinstance(con, postgres.PostgresConnection):
        con.insert_ignoring_existing(table, rows, key)
        return
    insert_frame(con, table, rows, or_ignore=True)


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, rows: pd.DataFrame, or_ignore: bool = False) -> None:
    """Insert a frame's rows into a DuckDB table by column name (DuckDB reads the frame in place);
    ``or_ignore``: a row whose key is stored already is skipped."""
    con.register("incoming_rows", rows)
    try:
        con.execute(f"INSERT {'OR IGNORE ' if or_ignore else ''}INTO {table} BY NAME SELECT * FROM incoming_rows")
    finally:
        con.unregister("incoming_rows")


def read_partition(con: Any, table: str, partition: Partition) -> pd.DataFrame:
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}")
    return con.execute(
        f"SELECT * FROM {table} WHERE eval_date = ? AND skill_version = ?",
        [partition.eval_date, partition.skill_version],
    ).df()


def query(path: str | Path, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
    with connect(path) as con:
        return con.execute(sql, params or []).df()


def upsert_ratings(con: duckdb.DuckDBPyConnection, rows: pd.DataFrame) -> int:
    """Insert ratings, replacing an earlier rating of the same rater for the same output."""
    if rows.empty:
        return 0
    if isinstance(con, postgres.PostgresConnection):
        con.upsert("human_ratings", rows, ("review_id", "rater"))
        return len(rows)
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("incoming_ratings", rows)
        try:
            con.execute("DELETE FROM human_ratings WHERE (review_id, rater) IN "
                        "(SELECT review_id, rater FROM incoming_ratings)")
            con.execute("INSERT INTO human_ratings BY NAME SELECT * FROM incoming_ratings")
        finally:
            con.unregister("incoming_ratings")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(rows)
