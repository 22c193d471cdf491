"""Everything a report shows, loaded from DuckDB into typed dataclasses.

``load_report(db, skill)`` picks the latest version (semantic-version order)
and its latest evaluation date unless told otherwise, and compares it with a
baseline: the suite's pinned ``baseline`` or the previous version with results
(``baselines.choose_baseline``), or an explicit ``against`` version
(``"none"`` for a run report without comparison).

This module is the entry point and the one import the renderers and the CLI
need: the records live in ``records``, and the loading is split by what it
reads (``loading``: versions, cases, metrics; ``run_info``: the run and its
environment, never a secret; ``comparison``: the baseline and each case's
change; ``history``: pass rate over versions and nights). Their public names
are re-exported here.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

from eval_pipelines.analysis.versions import version_sort_key
from eval_pipelines.reports.comparison import NO_BASELINE, attach_baseline, baseline_run, significance
from eval_pipelines.reports.history import load_history
from eval_pipelines.reports.loading import (
    eval_dates,
    load_cases,
    load_configurations,
    load_metrics,
    resolve_version,
    versions_with_results,
)
from eval_pipelines.reports.records import (
    COUNTED,
    UNCATEGORISED,
    BaselineCase,
    CaseResult,
    Grade,
    HistoryPoint,
    ReportData,
    ReportError,
    RunInfo,
    grader_family,
    once_per_report,
)
from eval_pipelines.reports.run_info import SAFE_TARGET_KEYS, load_run_info, safe_target
from eval_pipelines.reports.blind import load_blind
from eval_pipelines.reports.triggers import load_triggers
from eval_pipelines.store.connection import connect

__all__ = [
    "COUNTED", "NO_BASELINE", "SAFE_TARGET_KEYS", "UNCATEGORISED",
    "BaselineCase", "CaseResult", "Grade", "HistoryPoint", "ReportData", "ReportError", "RunInfo",
    "grader_family", "load_report", "once_per_report", "safe_target", "skills_with_results",
]


def load_report(db_path: str | Path, skill: str, version: str | None = None, eval_date: str | None = None,
                against: str | None = None, *, con: Any = None) -> ReportData:
    """The report data of ``skill`` (``version`` default: latest by semver; ``eval_date`` default:
    its latest) compared with ``against`` (default: the baseline the pipeline uses; ``"none"``: no
    comparison). Raises ``ReportError`` for an unknown skill, version or date.

    ``con``: an open connection to ``db_path`` to read through (the pipeline's own, which
    just wrote the rows: a second open of the file costs ~35 ms); default: one opened here."""
    target = str(db_path)
    if con is None and not target.startswith(("md:", "postgres")) and target != ":memory:" \
            and not Path(target).is_file():
        raise ReportError(f"no results database at {target} (run `eval-pipelines demo` or "
                          f"`eval-pipelines run` first, or pass --db)")
    with connect(target) if con is None else nullcontext(con) as con:
        versions = versions_with_results(con, skill)
        if not versions:
            skills = [r[0] for r in con.execute(
                "SELECT DISTINCT skill FROM test_results ORDER BY skill").fetchall()]
            raise ReportError(f"no results for skill {skill!r} in {target} "
                              f"(skills with results: {', '.join(skills) or 'none'})")
        version = resolve_version(skill, version, versions)
        key = f"{skill}@{version}"
        dates = eval_dates(con, key)
        if eval_date is None:
            eval_date = dates[-1]
        elif eval_date not in dates:
            raise ReportError(f"no results for {key} on {eval_date} (evaluation dates: {', '.join(dates)})")
        run = load_run_info(con, skill, version, eval_date)
        cases = load_cases(con, key, eval_date)
        metrics = load_metrics(con, key, eval_date)
        configurations, uplift = load_configurations(con, key, eval_date)

        baseline_info = baseline_run(con, run, versions, against)
        baseline_metrics: dict[str, float] = {}
        removed: list[str] = []
        if baseline_info is not None:
            baseline_metrics = load_metrics(con, baseline_info.skill_version, baseline_info.eval_date).get("*", {})
            removed = attach_baseline(con, cases, skill, baseline_info.version, baseline_info.eval_date)
        by_version, by_date = load_history(con, skill, versions, run, baseline_info)
        verdicts = significance(con, run, baseline_info)
        triggers = load_triggers(con, key, eval_date)
        blind = load_blind(con, key, eval_date)
    return ReportData(run=run, cases=cases, metrics=metrics, baseline=baseline_info,
                      baseline_metrics=baseline_metrics, version_history=by_version, date_history=by_date,
                      removed=removed, significance=verdicts, triggers=triggers,
                      blind=blind, configurations=configurations, uplift=uplift)


def skills_with_results(db_path: str | Path) -> dict[str, list[str]]:
    """{skill: versions with results, in semver order}."""
    with connect(str(db_path)) as con:
        pairs = con.execute("SELECT DISTINCT skill, version FROM test_results").fetchall()
    out: dict[str, list[str]] = {}
    for skill, version in pairs:
        out.setdefault(skill, []).append(version)
    return {s: sorted(v, key=version_sort_key) for s, v in sorted(out.items())}
