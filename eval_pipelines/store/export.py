"""Export every table and view of the store to Parquet or CSV with DuckDB's own ``COPY``.

Rows with an evaluation date and a skill version are written Hive-partitioned
by them (``OUT/test_results/eval_date=2026-11-23/skill_version=calculator@1.0.0/``),
so pandas, polars, Spark or DuckDB read the folder back as one table with those
two columns and can prune by them. The files hold both columns as well, with the
store's types (``eval_date`` VARCHAR, as in DuckDB). Tables or views without both columns are
written as one file (``OUT/response_cache.parquet``). Every export replaces
the folder of each relation it writes, never anything else in ``OUT``.

``skills`` limits the export to those skills (a name, or ``name@version``);
relations that have no ``skill`` or ``skill_version`` column are then left out
and listed as skipped, since none of their rows can be attributed to a skill.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import duckdb

from eval_pipelines.store.connection import connect
from eval_pipelines.store.postgres import is_postgres
from eval_pipelines.store.snapshot import copy_to_duckdb
from eval_pipelines.store.views import MARKER_VIEW, ensure_views

FORMATS = ("parquet", "csv")
PARTITION_COLUMNS = ("eval_date", "skill_version")


@dataclass
class ExportResult:
    written: dict[str, int] = field(default_factory=dict)  # relation -> rows
    skipped: dict[str, str] = field(default_factory=dict)  # relation -> why


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def relations(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every base table and view of the main schema with its columns, in name order."""
    rows = con.execute(
        """SELECT c.table_name, list(c.column_name ORDER BY c.ordinal_position)
           FROM information_schema.columns c
           JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
           WHERE c.table_schema = 'main' AND t.table_catalog = current_database()
           GROUP BY c.table_name ORDER BY c.table_name""").fetchall()
    return {name: list(columns) for name, columns in rows if name != MARKER_VIEW}


def _skill_filter(columns: list[str], skills: Sequence[str]) -> tuple[str, list[object]] | None:
    """A WHERE clause keeping the chosen skills' rows, or None when the relation cannot be filtered."""
    if not skills:
        return "", []
    versions = [s for s in skills if "@" in s]
    names = [s for s in skills if "@" not in s]
    if "skill_version" in columns:
        name_of = "split_part(skill_version, '@', 1)"
        return f" WHERE list_contains(?, skill_version) OR list_contains(?, {name_of})", [versions, names]
    if "skill" in columns and not versions:
        return " WHERE list_contains(?, skill)", [names]
    return None


def export_store(db_path: str, out: Path, fmt: str = "parquet", skills: Sequence[str] = ()) -> ExportResult:
    """Write every table and view of the database at ``db_path`` under ``out``."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if is_postgres(db_path):  # the shared store: its rows copied into a scratch DuckDB file first
        with tempfile.TemporaryDirectory(prefix="eval-export-") as scratch:
            copy = str(Path(scratch) / "snapshot.duckdb")
            copy_to_duckdb(db_path, copy, skills)
            return export_store(copy, out, fmt, skills)
    out.mkdir(parents=True, exist_ok=True)
    options = "FORMAT parquet, COMPRESSION zstd" if fmt == "parquet" else "FORMAT csv, HEADER true"
    result = ExportResult()
    with connect(db_path) as con:
        ensure_views(con)  # the documented views, also in a database written by an older version
        for name, columns in relations(con).items():
            where = _skill_filter(columns, skills)
            if where is None:
                result.skipped[name] = "no skill column to filter by"
                continue
            clause, params = where
            query = f"SELECT * FROM {_quote(name)}{clause}"
            count = con.execute(f"SELECT count(*) FROM ({query})", params).fetchone()[0]
            for stale in (out / name, out / f"{name}.{fmt}"):
                if stale.is_dir():
                    shutil.rmtree(stale)
                elif stale.exists():
                    stale.unlink()
            if all(c in columns for c in PARTITION_COLUMNS):
                if count == 0:
                    result.skipped[name] = "no rows"
                    continue
                target = out / name
                partition = ", ".join(PARTITION_COLUMNS)
                # The files keep the partition columns too, with the store's types: eval_date is VARCHAR
                # in DuckDB and in every file (a reader guessing types from the folder names would
                # otherwise make it DATE; docs/schema.md says how to read it back as VARCHAR).
                con.execute(f"COPY ({query}) TO {_literal(target)} "
                            f"({options}, PARTITION_BY ({partition}), WRITE_PARTITION_COLUMNS true)", params)
            else:
                con.execute(f"COPY ({query}) TO {_literal(out / f'{name}.{fmt}')} ({options})", params)
            result.written[name] = count
    return result
