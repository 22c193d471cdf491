"""How each version of a skill has done over time: the pass-rate points the
report charts, one per version and one per evaluation date of this version.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.reports.loading import as_float, as_int, dict_rows
from eval_pipelines.reports.records import HistoryPoint, RunInfo


def load_history(con, skill: str, versions: list[str], current: RunInfo,  # noqa: ANN001
                 baseline: RunInfo | None) -> tuple[list[HistoryPoint], list[HistoryPoint]]:
    rows = dict_rows(con, """
        SELECT version, eval_date,
               max(value) FILTER (WHERE metric = 'pass_rate') AS pass_rate,
               max(value) FILTER (WHERE metric = 'mean_score') AS mean_score,
               max(value) FILTER (WHERE metric = 'passed') AS passed,
               max(value) FILTER (WHERE metric = 'graded') + coalesce(max(value) FILTER (WHERE metric = 'errors'), 0)
                   AS counted
        FROM metrics WHERE skill = ? AND target = '*' AND configuration = 'with_skill'
        GROUP BY version, eval_date ORDER BY eval_date""", [skill])

    def point(r: dict[str, Any]) -> HistoryPoint:
        return HistoryPoint(
            version=r["version"], eval_date=r["eval_date"], pass_rate=as_float(r["pass_rate"]),
            mean_score=as_float(r["mean_score"]), passed=as_int(r["passed"]) or 0, counted=as_int(r["counted"]) or 0,
            is_current=(r["version"], r["eval_date"]) == (current.version, current.eval_date),
            is_baseline=baseline is not None and (r["version"], r["eval_date"]) == (baseline.version,
                                                                                     baseline.eval_date),
        )

    by_version: list[HistoryPoint] = []
    for version in versions:
        mine = [r for r in rows if r["version"] == version]
        if not mine:
            continue
        # The report's own run for the current (and baseline) version, else the version's latest night.
        chosen = next((r for r in mine if version == current.version and r["eval_date"] == current.eval_date),
                      None)
        if chosen is None and baseline is not None and version == baseline.version:
            chosen = next((r for r in mine if r["eval_date"] == baseline.eval_date), None)
        by_version.append(point(chosen or mine[-1]))
    by_date = [point(r) for r in rows if r["version"] == current.version]
    return by_version, by_date
