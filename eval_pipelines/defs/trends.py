"""One asset per skill, ``skill_trends/<skill>``: that skill's numbers over versions and nights.

The ``metrics`` asset is partitioned by date x skill version, so Dagster's plots of
its metadata run over every partition key and join unrelated skills in one line.
A skill's trend asset has no partitions: each evaluation of the skill records one
materialisation, a data point (pass rate, cost, latency, the version and the date as
text), so the plots of its metadata (Overview or Events -> Metadata -> Plots) draw
that skill alone, in the order the evaluations ran, and its latest materialisation
carries a Markdown table of pass rates, versions x nights.

They are external assets: nothing computes them, the evaluation step reports the data
point at runtime (a failed evaluation too: its point is its numbers and its verdict).
A materialisation rather than an observation, so the catalogue and the lineage show
when the skill was last evaluated instead of "never materialized". Their specs are made
from the skills found when the code location loads; a skill added later is recorded
under the same key at once and gets its description after a reload.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg

from eval_pipelines.pipeline.project import ProjectPaths, discover_skill_versions
from eval_pipelines.store.partition import Partition

if TYPE_CHECKING:
    import duckdb

TRENDS_GROUP = "skill_trends"
TRENDS_PREFIX = "skill_trends"
# Plotted when the metrics table has them for all targets together (target '*'):
# expectation pass rate and uplift come from suites that declare them.
TREND_METRICS = ("pass_rate", "case_pass_rate", "mean_score", "pass_at_1", "expectation_pass_rate",
                 "uplift", "cost_usd", "latency_p50_ms", "latency_p95_ms", "errors")


def trend_key(skill: str) -> dg.AssetKey:
    return dg.AssetKey([TRENDS_PREFIX, skill])


def trend_spec(skill: str) -> dg.AssetSpec:
    return dg.AssetSpec(
        trend_key(skill), deps=["metrics"], group_name=TRENDS_GROUP, kinds={"duckdb"}, owners=["team:evals"],
        description=f"How `{skill}` is doing: one data point per evaluation of any of its versions "
                    f"(pass rate, cost, latency; the version, the date and the verdict as text). Metadata -> "
                    f"Plots: the pass rate over versions and nights; `pass_rate_by_version_and_night`: the table.",
        metadata={"skill": skill})


def trend_specs(paths: ProjectPaths) -> list[dg.AssetSpec]:
    """A spec for every skill with at least one valid version in the skills folder."""
    if not Path(paths.skills_dir).is_dir():
        return []
    found, _ = discover_skill_versions(paths)
    return [trend_spec(skill) for skill in sorted({key.partition("@")[0] for key in found})]


def skill_history(con: duckdb.DuckDBPyConnection, skill: str) -> list[tuple[str, str, float]]:
    """(version, eval_date, pass rate) of every stored evaluation of the skill, all targets together."""
    return con.execute(
        "SELECT version, eval_date, value FROM metrics WHERE skill = ? AND target = '*' AND metric = 'pass_rate' "
        "AND configuration = 'with_skill' ORDER BY eval_date, version", [skill]).fetchall()


def history_markdown(rows: list[tuple[str, str, float]]) -> str:
    """Pass rates as a table: a row per version (first evaluated first), a column per night."""
    nights = sorted({night for _, night, _ in rows})
    versions = list(dict.fromkeys(version for version, _, _ in rows))
    cells = {(version, night): value for version, night, value in rows}
    lines = ["| version | " + " | ".join(nights) + " |", "|---|" + "---|" * len(nights)]
    for version in versions:
        values = [f"{cells[version, n]:.0%}" if (version, n) in cells else "" for n in nights]
        lines.append(f"| {version} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def trend_point(con: duckdb.DuckDBPyConnection, partition: Partition, verdict: str) -> dg.AssetMaterialization | None:
    """What the skill's trend asset records for this partition (None if it has no metrics rows)."""
    return trend_point_of(trend_rows(con, partition), partition, verdict)


TrendRows = tuple[dict[str, float], list[tuple[str, str, float]]]


def trend_rows(con: duckdb.DuckDBPyConnection, partition: Partition) -> TrendRows:
    """What a trend point is made of: this partition's overall metrics and the skill's pass-rate
    history. Read by the evaluation step through the run's own connection once the metrics are
    stored; the verdict, known only at the end of the step, is added by ``trend_point_of``."""
    values = dict(con.execute(
        "SELECT metric, value FROM metrics WHERE eval_date = ? AND skill_version = ? AND target = '*' "
        "AND configuration = 'with_skill'",
        [partition.eval_date, partition.skill_version]).fetchall())
    return values, (skill_history(con, partition.skill) if values else [])


def trend_point_of(rows: TrendRows, partition: Partition, verdict: str) -> dg.AssetMaterialization | None:
    values, history = rows
    if not values:
        return None
    skill, version = partition.skill, partition.version
    metadata: dict[str, Any] = {name: dg.MetadataValue.float(float(values[name]))
                                for name in TREND_METRICS if name in values}
    metadata |= {
        "version": dg.MetadataValue.text(version),
        "eval_date": dg.MetadataValue.text(partition.eval_date),
        "verdict": dg.MetadataValue.text(verdict),
        "partition": dg.MetadataValue.text(f"{partition.eval_date}|{partition.skill_version}"),
        "pass_rate_by_version_and_night": dg.MetadataValue.md(history_markdown(history)),
    }
    return dg.AssetMaterialization(asset_key=trend_key(skill), metadata=metadata,
                                   description=f"{partition.skill_version} on {partition.eval_date}: {verdict}")
