"""One partition's stages and checks, as the Dagster events the step reports.

``evaluate_one`` is a generator of events that *returns* what the partition came to
(``PartitionOutcome``): the step of a one-partition run yields the events itself and
fails the run when a check failed; a run over several skill versions
(``defs/range_run.py``) logs the same events, each naming its partition, and goes on
with the next version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Generator

import dagster as dg

from eval_pipelines.defs.metadata import as_metadata, table_metadata
from eval_pipelines.defs.partitions import partition_from_key
from eval_pipelines.defs.trends import TrendRows, trend_point_of, trend_rows

if TYPE_CHECKING:
    from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess, ModelCallConfig
    from eval_pipelines.pipeline.checks import CheckResult

# What the step reports: its assets' materialisations (or observations, see below), check
# results, and each skill's trend point (defs/trends.py).
StepEvent = dg.MaterializeResult | dg.AssetCheckResult | dg.AssetObservation | dg.AssetMaterialization


@dataclass
class PartitionOutcome:
    """What one partition's evaluation came to, for the run's verdict tags and its failure."""

    verdict: str | None = None  # None when no check was selected
    failed_checks: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # "check: description", for the run's failure
    # (asset, check, outcome) of the checks with nothing to check: reported only when the run fails
    skipped: list[tuple[str, str, "CheckResult"]] = field(default_factory=list)


@lru_cache(maxsize=None)
def _store_columns(db_path: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """Every table's (column, type), read once per process in one query: a connection per
    table (each open ~25 ms, with the schema check) cost a few hundred ms per run."""
    from eval_pipelines.store.connection import connect

    columns: dict[str, list[tuple[str, str]]] = {}
    with connect(db_path) as con:
        for table, name, kind in con.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall():
            columns.setdefault(table, []).append((name, kind))
    return {table: tuple(found) for table, found in columns.items()}


def evaluate_one(context: dg.AssetExecutionContext, partition_key: str, config: "ModelCallConfig",
                 project: "EvalProject", store: "EvalStore", models: "ModelAccess",
                 ) -> Generator[StepEvent, None, PartitionOutcome]:
    """Run the selected stages of ``stages.STAGES`` for one partition, each followed by its checks.

    Raises ``dg.Failure`` for an invalid package or a missing upstream partition."""
    # The evaluation core is imported here, when a run computes, not when the code location loads.
    from eval_pipelines.pipeline.collector import collection_paused

    with collection_paused():
        from eval_pipelines.pipeline.checks import checks_for
        from eval_pipelines.pipeline.stages import MissingUpstream, RunOptions, StageContext, run_stages
        from eval_pipelines.suite.errors import SpecErrors

    partition = partition_from_key(partition_key)
    ctx = StageContext(
        partition=partition, run_id=context.run.run_id, paths=project.paths(store.db_path),
        report_root=Path(project.root).resolve() / "reports", env=models.environment,
        options=RunOptions(use_cache=config.use_cache, concurrency=config.concurrency,
                           compare_blind=config.compare_blind), log=context.log)
    selected = {key.to_user_string() for key in context.selected_asset_keys}
    selected_checks = {key.name for key in context.selected_asset_check_keys}
    outcome = PartitionOutcome()
    trend: TrendRows | None = None  # the skill's trend point, but for the verdict known at the end
    try:
        for stage, result in run_stages(ctx, selected):
            if stage.name == "metrics":  # read through the run's connection, open since the stage wrote
                trend = trend_rows(ctx.connection(), partition)
            meta = as_metadata(result.metadata)
            for table, rows in result.rows.items():
                if table == stage.tables[0]:
                    meta |= table_metadata(list(_store_columns(store.db_path).get(table, ())), table, rows)
            meta["partition"] = dg.MetadataValue.text(f"{partition.eval_date} / {partition.skill_version}")
            evaluated = []
            for check in checks_for(stage.name):
                if check.name not in selected_checks:
                    continue
                result_of_check = check.evaluate(ctx)
                if result_of_check.skipped:
                    # Not reported: Dagster then shows the check as skipped (grey), not passed (green).
                    outcome.skipped.append((stage.name, check.name, result_of_check))
                    continue
                evaluated.append((check, result_of_check))
            failed_here = [f"{check.name}: {r.description}" for check, r in evaluated if not r.passed]
            if failed_here:
                # Its rows are stored, but the asset is not reported materialised: in the run that
                # fails, Dagster then shows this partition of this asset as failed (red) in the
                # partition grid and the "Failed" filter, while the other assets stay green.
                # The metadata goes on an observation so the numbers are still on the asset's page.
                meta["evaluation"] = dg.MetadataValue.text("failed: " + "; ".join(failed_here))
                yield dg.AssetObservation(asset_key=stage.name, partition=partition_key, metadata=meta)
            else:
                yield dg.MaterializeResult(asset_key=stage.name, metadata=meta)
            stop = False
            for check, r in evaluated:
                # The run's event log shows a check's metadata but not its description: the
                # result line goes first in the metadata so the numbers are visible there too.
                yield dg.AssetCheckResult(asset_key=stage.name, check_name=check.name, passed=r.passed,
                                          severity=dg.AssetCheckSeverity.ERROR, description=r.description,
                                          metadata=as_metadata({"result": r.description, **r.metadata}))
                if not r.passed:
                    outcome.failed_checks.append(check.name)
                    outcome.failures.append(f"{check.name}: {r.description}")
                    stop = stop or check.blocking
            if stop:  # a blocking check failed: the stages after it do not run
                break
    except SpecErrors as exc:
        raise dg.Failure(
            description=f"{ctx.current_stage}: invalid skill package or suite:\n{exc}",
            metadata={"stage": ctx.current_stage,
                      "problems": dg.MetadataValue.md("\n".join(f"- `{e}`" for e in exc.errors))},
            allow_retries=False,
        ) from None
    except MissingUpstream as exc:
        raise dg.Failure(description=f"{ctx.current_stage}: {exc}", metadata={"stage": ctx.current_stage},
                         allow_retries=False) from None
    if context.selected_asset_check_keys:
        outcome.verdict = verdict_of(outcome.failed_checks, [name for _, name, _ in outcome.skipped])
    if trend is not None:
        point = trend_point_of(trend, partition, outcome.verdict or verdict_of(outcome.failed_checks))
        if point is not None:  # skill_trends/<skill>: this evaluation as a data point of the skill's history
            yield point
    return outcome


def skipped_as_warnings(outcome: PartitionOutcome) -> list[dg.AssetCheckResult]:
    """In a failed run Dagster shows a check it never received as "execution failed"; the
    skipped ones had nothing to check, so they say so, as warnings (yellow), not errors."""
    return [dg.AssetCheckResult(asset_key=asset, check_name=name, passed=False,
                                severity=dg.AssetCheckSeverity.WARN, description=result.description,
                                metadata=as_metadata({"result": result.description, **result.metadata,
                                                      "skipped": True}))
            for asset, name, result in outcome.skipped]


VERDICT_ORDER = ("gate_failed", "regressed", "broken_cases", "no_thresholds", "passed")


def verdict_of(failed_checks: list[str], skipped_checks: list[str] = ()) -> str:
    """gate_failed, regressed, broken_cases (only the hidden-breakage check failed), no_thresholds (nothing failed, but no threshold was declared
    either: a 0% pass rate is not a pass), or passed."""
    regression_checks = {"no_significant_regression", "no_hidden_breakage"}
    if failed_checks and not set(failed_checks) - regression_checks:
        return "regressed" if "no_significant_regression" in failed_checks else "broken_cases"
    if failed_checks:
        return "gate_failed"
    return "no_thresholds" if "suite_thresholds_met" in skipped_checks else "passed"
