"""The results store on PostgreSQL, for many writers on many machines.

Chosen by the connection string: ``EVAL_PIPELINES_DB=postgresql://user@host/db``
(the DuckDB file stays the embedded default). The tables come from the same
``schema.sql`` as DuckDB's, its types translated (``postgres_ddl``), so a column
added there reaches both stores; the documented views are ``views_postgres.sql``,
the same views in PostgreSQL's dialect (tests compare their rows with DuckDB's).

:class:`PostgresConnection` answers the part of DuckDB's connection API the
pipeline uses (``execute(sql, params)`` with ``?`` placeholders, then
``fetchone``/``fetchall``/``df``/``description``), so the readers of the store
run unchanged. Writes differ: a partition is replaced with DELETE + COPY in one
transaction, under an advisory lock on the partition so that two writers of the
same partition (a retried run beside a late one) cannot both delete and both
insert (docs/deploy.md, "Results store").
"""

from __future__ import annotations

import hashlib
import math
import re
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from eval_pipelines.store.partition import Partition

if TYPE_CHECKING:  # pandas is imported when rows are read or written, not by is_postgres()
    import pandas as pd

PREFIXES = ("postgresql://", "postgres://")
META_TABLE = "eval_pipelines_meta"
# DuckDB type -> PostgreSQL type. JSON stays JSON (not JSONB): it keeps the text as
# written, so a row reads back byte for byte as DuckDB gives it.
_TYPES = {"VARCHAR": "TEXT", "DOUBLE": "DOUBLE PRECISION"}


def is_postgres(target: object) -> bool:
    return str(target).startswith(PREFIXES)


def postgres_ddl(duckdb_ddl: str) -> str:
    """schema.sql in PostgreSQL's dialect: comments dropped, DuckDB's type names mapped."""
    text = "\n".join(line.split("--", 1)[0] for line in duckdb_ddl.splitlines())
    for duck, pg in _TYPES.items():
        text = re.sub(rf"\b{duck}\b", pg, text)
    return text


@lru_cache(maxsize=None)
def _packaged(name: str) -> str:
    return resources.files("eval_pipelines.store").joinpath(name).read_text()


def views_sql() -> str:
    return _packaged("views_postgres.sql")


def _statements(text: str) -> list[str]:
    parts = re.split(r"^;;[ \t]*$", text, flags=re.M)
    return [p.strip() for p in parts if re.search(r"\bCREATE\b", p)]


def view_statements() -> list[str]:
    return _statements(views_sql())


def function_statements() -> list[str]:
    """DuckDB's functions the readers use, defined in PostgreSQL (postgres_functions.sql)."""
    return _statements(_packaged("postgres_functions.sql"))


def view_names() -> list[str]:
    return [re.search(r"VIEW\s+(\w+)", s).group(1) for s in view_statements()]


def _placeholders(sql: str) -> str:
    """DuckDB's ``?`` placeholders as psycopg's ``%s`` (``%`` doubled), outside quoted text."""
    out, quote = [], None
    for ch in sql:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "?":
            out.append("%s")
            continue
        if ch == "%":
            out.append("%%")
            continue
        out.append(ch)
    return "".join(out)


def _plain(value: Any) -> Any:
    """A pandas/numpy cell as the Python value psycopg writes (NaN, NA and NaT as NULL)."""
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
        return None if isinstance(value, float) and math.isnan(value) else value
    if isinstance(value, (list, dict)):
        import json
        return json.dumps(value)
    return value


class PostgresResult:
    """One statement's result, read as DuckDB's result is read."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    @property
    def description(self) -> list[tuple[str, ...]] | None:
        desc = self._cursor.description
        return None if desc is None else [(d.name,) for d in desc]

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall() if self._cursor.description is not None else []

    def fetchone(self) -> tuple | None:
        return self._cursor.fetchone() if self._cursor.description is not None else None

    def fetchmany(self, size: int) -> list[tuple]:
        return self._cursor.fetchmany(size) if self._cursor.description is not None else []

    def df(self) -> pd.DataFrame:
        import pandas as pd

        names = [d.name for d in self._cursor.description or []]
        rows = self.fetchall()
        frame = pd.DataFrame.from_records(rows, columns=names) if rows else pd.DataFrame(columns=names)
        for column in frame.columns:  # DuckDB gives TIMESTAMP as datetime64, not objects
            present = frame[column].dropna()
            if len(present) and isinstance(present.iloc[0], datetime):
                frame[column] = pd.to_datetime(frame[column])
        return frame


class PostgresConnection:
    """A psycopg connection with the store's schema, speaking the store's SQL."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> PostgresResult:
        describe = re.fullmatch(r"\s*DESCRIBE\s+(\w+)\s*", sql, flags=re.I)
        if describe:  # DuckDB's DESCRIBE: (column, type) in table order
            sql, params = ("SELECT column_name, upper(data_type) FROM information_schema.columns "
                           "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
                           [describe.group(1)])
        # DuckDB's rowid (insertion order, e.g. the suite's case order) is PostgreSQL's ctid: a
        # partition is written by one COPY, whose rows lie in insertion order.
        sql = re.sub(r"(\w+\.)?\browid\b", lambda m: f"{m.group(1) or ''}ctid", sql)
        cursor = self.raw.cursor()
        if params is None:
            cursor.execute(sql)
        else:
            cursor.execute(_placeholders(sql), [_param(p) for p in params])
        return PostgresResult(cursor)

    def close(self) -> None:
        self.raw.close()

    # ---- writes ---------------------------------------------------------------------

    def _lock_partition(self, cursor: Any, partition: Partition) -> None:
        key = int.from_bytes(hashlib.sha256(f"{partition.eval_date}|{partition.skill_version}".encode())
                             .digest()[:8], "big", signed=True)
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])

    def replace_partitions(self, partition: Partition, frames: Mapping[str, pd.DataFrame]) -> dict[str, int]:
        """Replace the partition's rows of every table in ``frames`` in one transaction."""
        with self.raw.transaction(), self.raw.cursor() as cursor:
            self._lock_partition(cursor, partition)
            for table, rows in frames.items():
                cursor.execute(f"DELETE FROM {table} WHERE eval_date = %s AND skill_version = %s",
                               [partition.eval_date, partition.skill_version])
                self._copy(cursor, table, rows)
        return {table: len(rows) for table, rows in frames.items()}

    def insert_ignoring_existing(self, table: str, rows: pd.DataFrame, key: str) -> None:
        """Insert rows whose ``key`` is not stored yet (the response cache: the first answer stays)."""
        columns = [str(c) for c in rows.columns]
        names = ", ".join(columns)
        sql = (f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(columns))}) "
               f"ON CONFLICT ({key}) DO NOTHING")
        with self.raw.transaction(), self.raw.cursor() as cursor:
            cursor.executemany(sql, list(_records(rows)))

    def upsert(self, table: str, rows: pd.DataFrame, key: Sequence[str]) -> None:
        """Insert rows, replacing stored rows with the same ``key`` columns (human ratings)."""
        columns = [str(c) for c in rows.columns]
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in key)
        sql = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))}) "
               f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}")
        with self.raw.transaction(), self.raw.cursor() as cursor:
            cursor.executemany(sql, list(_records(rows)))

    @staticmethod
    def _copy(cursor: Any, table: str, rows: pd.DataFrame) -> None:
        if not len(rows):
            return
        columns = ", ".join(str(c) for c in rows.columns)
        with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for record in _records(rows):
                copy.write_row(record)


def _param(value: Any) -> Any:
    """A query parameter: lists (``IN (SELECT unnest(?))``) as arrays, cells as plain values."""
    if isinstance(value, (list, tuple)):
        return list(value)
    return _plain(value)


def _records(rows: pd.DataFrame) -> Iterable[tuple]:
    for record in rows.itertuples(index=False, name=None):
        yield tuple(_plain(v) for v in record)


def open_connection(url: str, schema_sql: str, *, read_only: bool = False) -> PostgresConnection:
    """Connect (autocommit: every statement commits unless inside a write's transaction) and
    apply the schema and views unless this very version of them is installed."""
    import psycopg
    from psycopg.types.string import TextLoader

    raw = psycopg.connect(url, autocommit=True, connect_timeout=30)
    for json_type in ("json", "jsonb"):  # JSON reads back as its text, as DuckDB gives it
        raw.adapters.register_loader(json_type, TextLoader)
    con = PostgresConnection(raw)
    if not read_only:
        try:
            ensure_schema(con, schema_sql)
        except BaseException:
            raw.close()
            raise
    return con


def schema_version(schema_sql: str) -> str:
    text = schema_sql + views_sql() + _packaged("postgres_functions.sql")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ensure_schema(con: PostgresConnection, schema_sql: str) -> None:
    """Create the tables and views once per version of schema.sql and views_postgres.sql.

    ``ALTER TABLE`` takes an exclusive lock even when the column exists, so the DDL
    runs only when the stored version differs, under an advisory lock (one
    process installs, the others wait and find it done).
    """
    version = schema_version(schema_sql)
    if _stored_version(con) == version:
        return
    with con.raw.transaction(), con.raw.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(7331001)")
        cursor.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        cursor.execute(f"SELECT value FROM {META_TABLE} WHERE key = 'schema'")
        found = cursor.fetchone()
        if found and found[0] == version:
            return
        cursor.execute(postgres_ddl(schema_sql))
        for statement in function_statements():
            cursor.execute(statement)
        for name in reversed(view_names()):  # a view whose columns changed cannot be replaced
            cursor.execute(f"DROP VIEW IF EXISTS {name} CASCADE")
        for statement in view_statements():
            cursor.execute(statement)
        cursor.execute(f"INSERT INTO {META_TABLE} VALUES ('schema', %s) "
                       "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", [version])


def _stored_version(con: PostgresConnection) -> str | None:
    import psycopg

    try:
        row = con.execute(f"SELECT value FROM {META_TABLE} WHERE key = 'schema'").fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    return row[0] if row else None
