"""Reading a run's rows out of DuckDB for a report: which versions and evaluation
dates have results, the cases with their grades, the stored metrics, and the
small coercions every loader applies to DuckDB values (JSON text, NaN, None).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from eval_pipelines.analysis.versions import version_sort_key
from eval_pipelines.reports.records import UNCATEGORISED, CaseResult, Grade, ReportError, grader_family


def from_json(value: Any, default: Any = None) -> Any:
    if value is None:
        return default
    if isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


def as_float(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number  # NaN -> None


def as_int(value: Any) -> int | None:
    number = as_float(value)
    return None if number is None else int(number)


def first_row(con, sql: str, params: list[Any]) -> tuple | None:  # noqa: ANN001
    """The first row, fetching the whole result (DuckDB keeps a half-read result open on the connection)."""
    rows = con.execute(sql, params).fetchall()
    return rows[0] if rows else None


def dict_rows(con, sql: str, params: list[Any]) -> list[dict[str, Any]]:  # noqa: ANN001
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def stream_dict_rows(con, sql: str, params: list[Any], batch: int = 5000) -> Iterator[dict[str, Any]]:  # noqa: ANN001
    """The rows one at a time, fetched in batches: a report of 100,000 cases never holds the
    whole result twice (as fetched tuples and as dicts) beside the records built from it."""
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    while rows := cursor.fetchmany(batch):
        for row in rows:
            yield dict(zip(names, row))


def versions_with_results(con, skill: str) -> list[str]:  # noqa: ANN001
    found = [r[0] for r in con.execute(
        "SELECT DISTINCT version FROM test_results WHERE skill = ?", [skill]).fetchall()]
    return sorted(found, key=version_sort_key)


def resolve_version(skill: str, requested: str | None, versions: list[str], what: str = "version") -> str:
    if requested is None:
        return versions[-1]
    candidates = [requested, requested.partition("@")[2] if "@" in requested else requested]
    candidates += [c[1:] for c in candidates if c[:1] in ("v", "V")]
    for candidate in candidates:
        if candidate in versions:
            return candidate
    raise ReportError(f"no results for {what} {requested!r} of skill {skill!r} "
                      f"(versions with results: {', '.join(versions)})")


def eval_dates(con, skill_version: str) -> list[str]:  # noqa: ANN001
    return [r[0] for r in con.execute(
        "SELECT DISTINCT eval_date FROM test_results WHERE skill_version = ? ORDER BY eval_date",
        [skill_version]).fetchall()]


CASES_SQL = """
SELECT r.test_id, c.name, r.category AS result_category, c.category AS case_category,
       json_extract_string(c.metadata, '$.eval_type') AS eval_type,
       r.target, r.trial, c.input, c.expected, c.criteria,
       o.output, o.error, r.verdict, r.status, r.score, r.reason,
       o.latency_ms, o.cost_usd, o.prompt_tokens, o.completion_tokens, o.cached
FROM test_results r
LEFT JOIN test_cases c
       ON c.eval_date = r.eval_date AND c.skill_version = r.skill_version AND c.test_id = r.test_id
LEFT JOIN model_outputs o
       ON o.eval_date = r.eval_date AND o.skill_version = r.skill_version AND o.test_id = r.test_id
      AND o.target = r.target AND o.trial = r.trial AND o.configuration = r.configuration
WHERE r.skill_version = ? AND r.eval_date = ? AND r.configuration = 'with_skill'
ORDER BY c.rowid NULLS LAST, r.test_id, r.target, r.trial
"""


def load_cases(con, skill_version: str, eval_date: str) -> list[CaseResult]:  # noqa: ANN001
    grades: dict[tuple[str, str, int], list[Grade]] = {}
    for g in stream_dict_rows(con, "SELECT * FROM grades WHERE skill_version = ? AND eval_date = ? "
                            "AND configuration = 'with_skill' ORDER BY test_id, target, trial, assertion_index", [skill_version, eval_date]):
        grades.setdefault((g["test_id"], g["target"], int(g["trial"])), []).append(Grade(
            index=int(g["assertion_index"]), type=g["assertion_type"], name=g["assertion_name"],
            family=grader_family(g["assertion_type"]), weight=float(g["weight"]),
            required=from_json(g["required"], False), score=float(g["score"]), passed=bool(g["passed"]),
            status=g["status"], reason=g["reason"], details=from_json(g["details"], {}) or {},
        ))
    flaky = {(t, g) for t, g in con.execute(
        "SELECT test_id, target FROM case_metrics WHERE skill_version = ? AND eval_date = ? "
        "AND metric = 'flaky' AND value = 1 AND configuration = 'with_skill'", [skill_version, eval_date]).fetchall()}
    cases = []
    for r in stream_dict_rows(con, CASES_SQL, [skill_version, eval_date]):
        key = (r["test_id"], r["target"], int(r["trial"]))
        cases.append(CaseResult(
            test_id=r["test_id"], name=r["name"],
            category=r["result_category"] or r["case_category"] or r["eval_type"] or UNCATEGORISED,
            target=r["target"], trial=int(r["trial"]), input=r["input"] or "",
            expected=from_json(r["expected"]), criteria=r["criteria"], output=r["output"], error=r["error"],
            verdict=r["verdict"], status=r["status"], score=as_float(r["score"]), reason=r["reason"] or "",
            latency_ms=as_float(r["latency_ms"]), cost_usd=as_float(r["cost_usd"]),
            prompt_tokens=as_int(r["prompt_tokens"]), completion_tokens=as_int(r["completion_tokens"]),
            cached=bool(r["cached"]), grades=grades.get(key, []),
            flaky=(r["test_id"], r["target"]) in flaky,
        ))
    return cases


def load_metrics(con, skill_version: str, eval_date: str,  # noqa: ANN001
                 configuration: str = "with_skill") -> dict[str, dict[str, float]]:
    """target -> metric -> value of one configuration (default: the skill as shipped, with_skill)."""
    out: dict[str, dict[str, float]] = {}
    for target, metric, value in con.execute(
            "SELECT target, metric, value FROM metrics WHERE skill_version = ? AND eval_date = ? "
            "AND configuration = ? ORDER BY target, metric", [skill_version, eval_date, configuration]).fetchall():
        out.setdefault(target, {})[metric] = float(value)
    return out


def load_configurations(con, skill_version: str, eval_date: str  # noqa: ANN001
                        ) -> tuple[dict[str, dict[str, float]], list[dict[str, Any]]]:
    """({configuration: its metrics over all targets}, the skill_uplift rows) when the run had more
    than one configuration; ({}, []) otherwise."""
    configurations = [r[0] for r in con.execute(
        "SELECT DISTINCT configuration FROM metrics WHERE skill_version = ? AND eval_date = ? ORDER BY 1",
        [skill_version, eval_date]).fetchall()]
    uplift = dict_rows(con, "SELECT target, cases_compared, with_skill, without_skill, delta, ci_low, ci_high, "
                            "p_rise, p_drop, p_value, verdict, wording FROM skill_uplift "
                            "WHERE skill_version = ? AND eval_date = ? ORDER BY target", [skill_version, eval_date])
    if len(configurations) < 2 and not uplift:
        return {}, []
    return ({c: load_metrics(con, skill_version, eval_date, c).get("*", {}) for c in configurations}, uplift)
