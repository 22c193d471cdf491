"""The column descriptions of docs/schema.md, read from its tables.

``eval_pipelines/defs/column_docs.py`` holds them as a mapping (docs/ is not part of
the installed package); ``tests/defs/test_dagster_ui.py`` checks the two agree.
Regenerate after editing docs/schema.md::

    python -m tests.support.schema_doc > eval_pipelines/defs/column_docs.py
"""

from __future__ import annotations

import re
from pathlib import Path

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "schema.md"
COMMON = "*"  # the columns every table carries (the table before the first section)

_SECTION = re.compile(r"^## `(\w+)`")
_ROW = re.compile(r"^\|(.+?)\|(.+?)\|(.+)\|\s*$")


def column_descriptions(text: str | None = None) -> dict[str, dict[str, str]]:
    """table (or ``*`` for every table) -> column -> meaning, from the ``| column | type | meaning |`` tables."""
    text = SCHEMA_DOC.read_text() if text is None else text
    described: dict[str, dict[str, str]] = {}
    table: str | None = COMMON
    in_columns = False
    for line in text.splitlines():
        section = _SECTION.match(line)
        if section or line.startswith("## "):
            table, in_columns = (section.group(1) if section else None), False
            continue
        row = _ROW.match(line)
        if not row:
            in_columns = False
            continue
        first, _, meaning = (cell.strip() for cell in row.groups())
        if first == "column":
            in_columns = True
            continue
        if not in_columns or table is None or set(first) <= set("-"):
            continue
        for column in re.findall(r"`(\w+)`", first):
            described.setdefault(table, {})[column] = meaning
    return described


def render_module(described: dict[str, dict[str, str]]) -> str:
    lines = ['"""Column descriptions of the DuckDB tables, from docs/schema.md (made by',
             '``python -m tests.support.schema_doc``; a test checks they agree)."""', "",
             "COMMON = " + repr(COMMON), "",
             "COLUMN_DESCRIPTIONS: dict[str, dict[str, str]] = {"]
    for table, columns in described.items():
        lines.append(f"    {table!r}: {{")
        for column, meaning in columns.items():
            lines.append(f"        {column!r}:")
            lines.append(f"            {meaning!r},")
        lines.append("    },")
    lines += ["}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    (SCHEMA_DOC.parents[1] / "eval_pipelines" / "defs" / "column_docs.py").write_text(render_module(column_descriptions()))
