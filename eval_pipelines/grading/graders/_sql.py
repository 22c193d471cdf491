"""SQL reading shared by ``is_sql`` and ``contains_sql`` (promptfoo's src/assertions/sql.ts).

promptfoo parses with node-sql-parser in the chosen database's grammar (``databaseType``,
default MySQL) and checks its allow-lists with node-sql-parser's ``whiteListCheck``: every
table the statement touches, written ``{type}::{db}::{table}`` (``select::null::users``,
``update::null::employee``), and every column, ``{type}::{table}::{column}``
(``select::null::name``; ``*`` is ``(.*)``), must match one entry, each entry a regular
expression matched whole and case-insensitively (``(select|update)::null::departments``).

We parse with sqlglot in the matching dialect and build the same lists from its tree: the
table an INSERT/UPDATE/DELETE writes is of that type, every other table ``select``; a column
written by an UPDATE's SET or an INSERT's column list is of that type, every other column
``select``; a column's table is the one its qualifier names (an alias resolved), else
``null``, and an unqualified column of a statement reading one table also matches entries
naming that table (promptfoo's normalised entries). One more rule of promptfoo's: a select
item written ``first_name last_name`` (two bare names, no AS) is a likely missing comma and
fails.
"""

from __future__ import annotations

import re
from typing import Any

# node-sql-parser's database names (compared lowercased) -> sqlglot's dialect.
DIALECTS = {"mysql": "mysql", "mariadb": "mysql", "postgresql": "postgres", "bigquery": "bigquery",
            "hive": "hive", "redshift": "redshift", "snowflake": "snowflake", "sqlite": "sqlite",
            "transactsql": "tsql", "trino": "trino", "athena": "athena"}
UNSUPPORTED = ("DB2", "FlinkSQL", "Noql")  # node-sql-parser grammars sqlglot has no dialect for

_FENCE = re.compile(r"```(?:sql)?([^`]+)```")


def extract(text: str) -> str:
    """promptfoo's contains-sql: the first fenced block's code, else the whole output."""
    match = _FENCE.search(text)
    return match.group(1).strip() if match else text


def dialect(database_type: str) -> str:
    name = DIALECTS.get(database_type.lower())
    if name is None:
        raise ValueError(f"databaseType {database_type!r} is not supported: one of MySQL, MariaDB, PostgreSQL, "
                         "BigQuery, Hive, Redshift, Snowflake, SQLite, TransactSQL, Trino, Athena "
                         f"({', '.join(UNSUPPORTED)}: no grammar here)")
    return name


def parse(sql: str, database_type: str) -> list[Any] | None:
    """The statements of ``sql``, or None when it does not parse in that dialect."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, SqlglotError

    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect(database_type), error_level=ErrorLevel.RAISE)
                 if t is not None]
    except SqlglotError:
        return None
    # sqlglot also reads a bare expression (`hello world` as an alias, a fenced block as a quoted
    # column) and keeps a statement it does not know as an opaque command: neither is a statement.
    if not trees or not all(isinstance(t, _statements()) for t in trees) or _missing_comma(sql, trees):
        return None
    return trees


def _statements() -> tuple[type, ...]:
    from sqlglot import exp

    names = ("Query", "DML", "DDL", "Drop", "Alter", "TruncateTable", "Use", "Show", "Describe", "Set",
             "Transaction", "Commit", "Rollback", "Grant", "Revoke", "Pragma", "Analyze", "Copy", "Cache",
             "Uncache", "Refresh", "Kill", "LoadData")
    return tuple(getattr(exp, n) for n in names if isinstance(getattr(exp, n, None), type))


def _missing_comma(sql: str, trees: list[Any]) -> bool:
    from sqlglot import exp

    for select in (s for tree in trees for s in tree.find_all(exp.Select)):
        for item in select.expressions:
            if not isinstance(item, exp.Alias) or not isinstance(item.this, exp.Column) or item.this.table:
                continue
            name, alias = item.this.this, item.args.get("alias")
            if not isinstance(name, exp.Identifier) or not isinstance(alias, exp.Identifier):
                continue
            if name.quoted or alias.quoted or "end" not in name.meta or "start" not in alias.meta:
                continue
            if not sql[name.meta["end"] + 1:alias.meta["start"]].strip():  # no AS between them
                return True
    return False


def _written(tree: Any) -> tuple[str, Any]:
    """(statement type, the table it writes or None)."""
    from sqlglot import exp

    for kind, name in ((exp.Insert, "insert"), (exp.Update, "update"), (exp.Delete, "delete")):
        if isinstance(tree, kind):
            target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
            return name, target
    return "select", None


def authorities(trees: list[Any]) -> tuple[list[str], list[tuple[str, str | None]]]:
    """(tables, columns): node-sql-parser's ``tableList`` entries, and each column's entry
    with, for an unqualified column of a one-table statement, the entry naming that table."""
    from sqlglot import exp

    tables: list[str] = []
    columns: list[tuple[str, str | None]] = []
    for tree in trees:
        kind, target = _written(tree)
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        aliases: dict[str, str] = {}
        read: list[str] = []
        for table in tree.find_all(exp.Table):
            if not table.name or table.name.lower() in ctes:
                continue
            entry = f"{kind if table is target else 'select'}::{table.db or 'null'}::{table.name}"
            if entry not in tables:
                tables.append(entry)
            read.append(table.name)
            if table.alias:
                aliases[table.alias.lower()] = table.name
        only = read[0] if len(set(read)) == 1 else None
        set_columns = {id(e.this) for e in tree.args.get("expressions") or []
                       if kind == "update" and isinstance(e, exp.EQ)}
        insert_columns = {id(c) for c in (tree.this.expressions if kind == "insert" and
                                          isinstance(tree.this, exp.Schema) else [])}
        for column in tree.find_all(exp.Column, exp.Star, exp.Identifier):
            if isinstance(column, exp.Identifier):
                if id(column) not in insert_columns:
                    continue
                name, qualifier, of = column.name, None, "insert"
            elif isinstance(column, exp.Star):
                if isinstance(column.parent, exp.Column) or isinstance(column.parent, (exp.Count, exp.Anonymous)):
                    continue
                name, qualifier, of = "(.*)", None, "select"
            else:
                name = "(.*)" if isinstance(column.this, exp.Star) else column.name
                qualifier = aliases.get(column.table.lower(), column.table) if column.table else None
                of = "update" if id(column) in set_columns else "select"
            entry = f"{of}::{qualifier or 'null'}::{name}"
            resolved = f"{of}::{only}::{name}" if qualifier is None and only else None
            if (entry, resolved) not in columns:
                columns.append((entry, resolved))
    return tables, columns


def allowed(entry: str, allow: list[str]) -> bool:
    return any(re.fullmatch(pattern, entry, re.IGNORECASE) for pattern in allow)
