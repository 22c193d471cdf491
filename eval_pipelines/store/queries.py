"""Questions the pipeline asks of stored results, each answered in one place.

The one baseline rule lives here: a run is compared with the previous version
of its skill that has results (or the version its suite pins, see
``analysis.baselines.choose_baseline``), on that version's latest evaluation
date, and with the previous night of the same version. Grading (regression
comparisons), the regression stage and the reports all ask this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from eval_pipelines.analysis.baselines import choose_baseline
from eval_pipelines.grading.base import GradingContext, OutputKey
from eval_pipelines.store.partition import Partition


@dataclass(frozen=True)
class BaselineRun:
    comparison: str  # "previous_version" | "previous_night"
    partition: Partition


def versions_with_results(con: duckdb.DuckDBPyConnection, skill: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT version FROM test_results WHERE skill = ?", [skill]).fetchall()]


def eval_dates(con: duckdb.DuckDBPyConnection, skill_version: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT eval_date FROM test_results WHERE skill_version = ? ORDER BY eval_date",
        [skill_version]).fetchall()]


def previous_version(con: duckdb.DuckDBPyConnection, partition: Partition,
                     pinned: str | None = None) -> Partition | None:
    """The baseline version's latest evaluation, or None (first version, or a pinned one without results)."""
    version = choose_baseline(partition.version, versions_with_results(con, partition.skill), pinned)
    if version is None:
        return None
    key = f"{partition.skill}@{version}"
    return Partition(eval_dates(con, key)[-1], key)


def previous_night(con: duckdb.DuckDBPyConnection, partition: Partition) -> Partition | None:
    earlier = [d for d in eval_dates(con, partition.skill_version) if d < partition.eval_date]
    return Partition(earlier[-1], partition.skill_version) if earlier else None


def find_baselines(con: duckdb.DuckDBPyConnection, partition: Partition,
                   pinned: str | None = None) -> list[BaselineRun]:
    """The previous version's latest run, and the previous night of this version."""
    found = []
    version = previous_version(con, partition, pinned)
    if version is not None:
        found.append(BaselineRun("previous_version", version))
    night = previous_night(con, partition)
    if night is not None:
        found.append(BaselineRun("previous_night", night))
    return found


def baseline_outputs(con: duckdb.DuckDBPyConnection, baseline: Partition,
                     configuration: str = "with_skill") -> dict[OutputKey, str]:
    rows = con.execute(
        "SELECT test_id, target, trial, output FROM model_outputs "
        "WHERE skill_version = ? AND eval_date = ? AND output IS NOT NULL "
        "AND coalesce(configuration, 'with_skill') = ?",
        [baseline.skill_version, baseline.eval_date, configuration]).fetchall()
    return {(t, g, int(k)): o for t, g, k, o in rows}


def human_ratings(con: duckdb.DuckDBPyConnection, partition: Partition) -> dict[tuple[str, str, int, str], list[dict]]:
    rows = con.execute(
        "SELECT test_id, target, trial, output_hash, rater, rating, comment FROM human_ratings "
        "WHERE skill_version = ? ORDER BY imported_at, rater",
        [partition.skill_version],
    ).fetchall()
    out: dict[tuple[str, str, int, str], list[dict]] = {}
    for test_id, target, trial, digest, rater, rating, comment in rows:
        out.setdefault((test_id, target, int(trial), digest), []).append(
            {"rater": rater, "rating": rating, "comment": comment})
    return out


def grading_context(con: duckdb.DuckDBPyConnection, partition: Partition, pinned: str | None = None,
                    configuration: str = "with_skill") -> tuple[Partition | None, GradingContext]:
    """(the baseline run, what grading may consult: its outputs of the same configuration and the
    ratings people gave)."""
    baseline = previous_version(con, partition, pinned)
    outputs = baseline_outputs(con, baseline, configuration) if baseline is not None else {}
    return baseline, GradingContext(baseline_outputs=outputs, human_ratings=human_ratings(con, partition))
