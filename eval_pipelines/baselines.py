"""Which stored run a skill version is compared with.

The baseline of ``name@version`` is the version pinned in its suite
(``baseline: 1.2.0``) when that version has results, else the highest earlier
version of the same skill that has results (semantic-version order, see
``versions``). Its outputs are read from its latest evaluation date.
"""

from __future__ import annotations

import duckdb

from eval_pipelines.engine import GradingContext, OutputKey
from eval_pipelines.store.duckdb_store import Partition
from eval_pipelines.versions import version_sort_key


def choose_baseline(current: str, available: list[str], pinned: str | None = None) -> str | None:
    """The baseline version among ``available`` versions (never ``current`` itself)."""
    if pinned:
        pinned_version = pinned.partition("@")[2] or pinned
        return pinned_version if pinned_version in available and pinned_version != current else None
    earlier = [v for v in available if v != current and version_sort_key(v) < version_sort_key(current)]
    return max(earlier, key=version_sort_key) if earlier else None


def baseline_outputs(con: duckdb.DuckDBPyConnection, partition: Partition,
                     pinned: str | None = None) -> tuple[str | None, dict[OutputKey, str]]:
    """(baseline skill_version or None, its outputs by (test_id, target, trial))."""
    versions = [row[0] for row in con.execute(
        "SELECT DISTINCT version FROM model_outputs WHERE skill = ?", [partition.skill]).fetchall()]
    version = choose_baseline(partition.version, versions, pinned)
    if version is None:
        return None, {}
    key = f"{partition.skill}@{version}"
    rows = con.execute(
        """
        SELECT test_id, target, trial, output FROM model_outputs
        WHERE skill_version = ? AND output IS NOT NULL
          AND eval_date = (SELECT max(eval_date) FROM model_outputs WHERE skill_version = ?)
        """,
        [key, key],
    ).fetchall()
    return key, {(t, g, int(k)): o for t, g, k, o in rows}


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


def grading_context(con: duckdb.DuckDBPyConnection, partition: Partition,
                    pinned: str | None = None) -> tuple[str | None, GradingContext]:
    key, outputs = baseline_outputs(con, partition, pinned)
    return key, GradingContext(baseline_outputs=outputs, human_ratings=human_ratings(con, partition))
