"""``is_sql`` (promptfoo ``is-sql``): the output is SQL in the database's grammar, touching only
allowed tables and columns (see ``_sql`` for the lists and how entries match).

Scored 1 or 0 with promptfoo's reasons; ``details.unauthorized`` lists the entries no allowed
pattern matched.
"""

from __future__ import annotations

import re

from pydantic import field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders import _sql


class SqlParams(Params):
    database_type: str = "MySQL"  # promptfoo's `databaseType` (node-sql-parser's names)
    allowed_tables: list[str] | None = None  # `{type}::{db}::{table}` patterns
    allowed_columns: list[str] | None = None  # `{type}::{table}::{column}` patterns

    @field_validator("database_type")
    @classmethod
    def _known(cls, value: str) -> str:
        _sql.dialect(value)
        return value

    @field_validator("allowed_tables", "allowed_columns")
    @classmethod
    def _patterns(cls, value: list[str] | None) -> list[str] | None:
        for pattern in value or []:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
        return value


def check_sql(params: SqlParams, sql: str) -> Outcome:
    trees = _sql.parse(sql, params.database_type)
    if trees is None:
        return Outcome.binary(False, f"SQL statement does not conform to the provided {params.database_type} "
                              "database syntax.")
    tables, columns = _sql.authorities(trees)
    reasons, unauthorized = [], []
    if params.allowed_tables is not None:
        bad = [t for t in tables if not _sql.allowed(t, params.allowed_tables)]
        if bad:
            reasons.append(f"SQL references unauthorized table(s). Found: [{', '.join(bad)}]. "
                           f"Allowed: [{', '.join(params.allowed_tables)}].")
            unauthorized += bad
    if params.allowed_columns is not None:
        bad = [entry for entry, resolved in columns if not _sql.allowed(entry, params.allowed_columns)
               and not (resolved and _sql.allowed(resolved, params.allowed_columns))]
        if bad:
            reasons.append(f"SQL references unauthorized column(s). Found: [{', '.join(bad)}]. "
                           f"Allowed: [{', '.join(params.allowed_columns)}].")
            unauthorized += bad
    if reasons:
        return Outcome.binary(False, " ".join(reasons), unauthorized=unauthorized)
    return Outcome.binary(True, "the output is valid SQL" + (" using only allowed tables and columns"
                                                             if params.allowed_tables or params.allowed_columns
                                                             else ""), unauthorized=[])


class IsSql(Grader[SqlParams]):
    type = "is_sql"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = SqlParams

    def grade(self, params: SqlParams, inp: GradeInput) -> Outcome:
        return check_sql(params, inp.output)
