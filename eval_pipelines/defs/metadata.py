"""Stage and check metadata (plain values) as Dagster metadata values."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import dagster as dg

from eval_pipelines.defs.column_docs import COLUMN_DESCRIPTIONS, COMMON
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


def code_reference(function: Callable[..., Any]) -> dg.LocalFileCodeReference:
    """Where a stage's work is written (the asset's page links to it; the multi_asset is added
    by ``with_source_code_references`` in definitions.py)."""
    return dg.LocalFileCodeReference(file_path=inspect.getsourcefile(function) or "",
                                      line_number=inspect.getsourcelines(function)[1],
                                      label=f"stage {function.__name__}")


def column_description(table: str, column: str) -> str | None:
    """What docs/schema.md says the column holds (None for a column it does not describe)."""
    return COLUMN_DESCRIPTIONS.get(table, {}).get(column) or COLUMN_DESCRIPTIONS[COMMON].get(column)


def table_name(table: str) -> str:
    """``dagster/table_name``: the table in the DuckDB file's main schema (the file is the store's)."""
    return f"main.{table}"


def table_metadata(store_columns: list[tuple[str, str]], table: str, rows: int) -> dict[str, Any]:
    """Row count, table name and column schema with descriptions of the table a stage wrote."""
    return {
        "dagster/row_count": dg.MetadataValue.int(rows),
        "dagster/column_schema": dg.TableSchema(columns=[
            dg.TableColumn(name, kind, description=column_description(table, name)) for name, kind in store_columns]),
        "dagster/table_name": dg.MetadataValue.text(table_name(table)),
        "table": dg.MetadataValue.text(table),
    }
