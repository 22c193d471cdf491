"""Stage and check metadata (plain values) as Dagster metadata values."""

from __future__ import annotations

from typing import Any

import dagster as dg

from eval_pipelines.pipeline.stages import FilePath, Markdown


def metadata_value(value: Any) -> Any:
    if isinstance(value, Markdown):
        return dg.MetadataValue.md(str(value))
    if isinstance(value, FilePath):
        return dg.MetadataValue.path(str(value))
    if isinstance(value, bool):
        return dg.MetadataValue.bool(value)
    if isinstance(value, int):
        return dg.MetadataValue.int(value)
    if isinstance(value, float):
        return dg.MetadataValue.float(value)
    if isinstance(value, (dict, list)):
        return dg.MetadataValue.json(value)
    return dg.MetadataValue.text(str(value))


def as_metadata(values: dict[str, Any]) -> dict[str, Any]:
    return {key: metadata_value(value) for key, value in values.items()}


def table_metadata(store_columns: list[tuple[str, str]], table: str, rows: int) -> dict[str, Any]:
    """Row count and column schema of the table a stage wrote (Dagster shows both)."""
    return {
        "dagster/row_count": dg.MetadataValue.int(rows),
        "dagster/column_schema": dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind in store_columns]),
        "table": dg.MetadataValue.text(table),
    }
