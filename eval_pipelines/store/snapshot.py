"""Copy the shared PostgreSQL store into a DuckDB file, for DuckDB's SQL over the results.

DuckDB reads PostgreSQL directly through its ``postgres`` extension where
extensions can be downloaded; where they cannot (offline machines, pinned
DuckDB versions) this copy gives the same tables, and DuckDB's own
``views.sql`` on top of them, in a local file: ``eval-pipelines export``
writes it out as Parquet or CSV, and ``copy_to_duckdb`` can be called on its own.
"""

from __future__ import annotations

from typing import Sequence

from eval_pipelines.store.connection import TABLES, connect, insert_frame


# Every table of schema.sql: the partitioned ones, then the two that are not.
SNAPSHOT_TABLES = (*TABLES, "response_cache", "human_ratings")


def copy_to_duckdb(url: str, duckdb_path: str, skills: Sequence[str] = ()) -> dict[str, int]:
    """Copy every table at ``url`` (only ``skills``' rows of the partitioned tables when given)
    into the DuckDB file ``duckdb_path``; returns rows copied per table."""
    versions = [s for s in skills if "@" in s]
    names = [s for s in skills if "@" not in s]
    copied: dict[str, int] = {}
    with connect(url, read_only=True) as source, connect(duckdb_path) as target:
        for table in SNAPSHOT_TABLES:
            sql, params = f"SELECT * FROM {table}", None
            if skills and table in TABLES:
                sql += " WHERE skill_version = ANY(?) OR split_part(skill_version, '@', 1) = ANY(?)"
                params = [versions, names]
            frame = source.execute(sql, params).df()
            copied[table] = len(frame)
            if len(frame):
                insert_frame(target, table, frame)
    return copied
