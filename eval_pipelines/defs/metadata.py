"""Stage and check metadata (plain values) as Dagster metadata values."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import dagster as dg

from eval_pipelines.defs.column_docs import COLUMN_DESCRIPTIONS, COMMON
from eval_pipelines.pipeline.catalog import FilePath, Markdown


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


@lru_cache(maxsize=None)
def _source(module: str) -> tuple[str, str]:
    """(file, text) of a module, found without importing it (the stages import the whole core)."""
    spec = importlib.util.find_spec(module)
    path = spec.origin if spec and spec.origin else ""
    return path, Path(path).read_text() if path else ""


def code_reference(module: str, function: str) -> dg.LocalFileCodeReference:
    """Where a stage's work is written (the asset's page links to it; the multi_asset is added
    by ``with_source_code_references`` in definitions.py)."""
    path, text = _source(module)
    found = re.search(rf"^(?:async )?def {re.escape(function)}\(", text, re.MULTILINE)
    return dg.LocalFileCodeReference(file_path=path, line_number=text.count("\n", 0, found.start()) + 1 if found else 1,
                                      label=f"stage {function}")


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
