"""Several skill versions in one run: the nightly batch without Dagster's cost per run.

A run costs Dagster a fixed amount whatever it computes: the run's creation and its
planned events, the launch, a worker, the run's start and end (docs/benchmarks-nightly.md
measured about 4 s of CPU per run against 0.7 s for our stages). The nightly schedule
therefore asks for a *range* of skill versions per run (``defs/run_requests.py``); the
step evaluates them one after another and reports each version's materialisations and
check results under its own partition, so the partition grid, the asset checks and the
stored rows are exactly those of one run per version.

A version that fails (a check, an invalid package, an unexpected error) does not stop
the others; the run fails at the end and names every version that failed.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

import dagster as dg

from eval_pipelines.defs.partition_run import (VERDICT_ORDER, PartitionOutcome, StepEvent, evaluate_one,
                                               skipped_as_warnings)

if TYPE_CHECKING:
    from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess, ModelCallConfig

# Run tags hold at most this many failed versions by name (the run's failure names them all).
TAGGED_FAILURES = 20


def as_partition_event(event: StepEvent, partition_key: str) -> dg.AssetMaterialization | dg.AssetObservation \
        | dg.AssetCheckEvaluation:
    """The event as a ranged step logs it: naming its partition, which a step over a range
    cannot leave to Dagster (it would record one result for every partition of the range)."""
    if isinstance(event, dg.MaterializeResult):
        return dg.AssetMaterialization(asset_key=event.asset_key, partition=partition_key,
                                       metadata=event.metadata)
    if isinstance(event, dg.AssetCheckResult):
        return dg.AssetCheckEvaluation(asset_key=event.asset_key, check_name=event.check_name,
                                       passed=event.passed, metadata=event.metadata or {},
                                       severity=event.severity, description=event.description,
                                       partition=partition_key)
    return event  # observations carry their partition; trend points belong to an unpartitioned asset


def evaluate_range(context: dg.AssetExecutionContext, config: "ModelCallConfig", project: "EvalProject",
                   store: "EvalStore", models: "ModelAccess") -> None:
    """Evaluate every partition of the run's range in key order, each reported (logged) as its own."""
    outcomes: dict[str, PartitionOutcome] = {}
    errors: dict[str, str] = {}  # partition -> why it could not be evaluated
    keys = list(context.partition_keys)
    for position, key in enumerate(keys, 1):
        context.log.info(f"partition {position}/{len(keys)}: {key}")
        events = evaluate_one(context, key, config, project, store, models)
        try:
            while True:
                context.log_event(as_partition_event(next(events), key))
        except StopIteration as done:
            outcomes[key] = done.value
        except dg.Failure as failure:
            # Its first line and, for an invalid package, the first problem (the log has them all).
            errors[key] = " ".join((failure.description or "failed").splitlines()[:2])
            context.log.error(f"{key}: {failure.description}")
        except Exception as exc:  # noqa: BLE001 - one version's crash must not cost the others their run
            errors[key] = f"{type(exc).__name__}: {exc}".splitlines()[0]
            context.log.error(f"{key}: unexpected error\n{traceback.format_exc()}")
    failed = {key: "; ".join(o.failures) for key, o in outcomes.items() if o.failures} | errors
    _tag_verdicts(context, outcomes, failed, errored=len(errors))
    if not failed:
        return
    for key, outcome in outcomes.items():  # see skipped_as_warnings: the run is about to fail
        for warning in skipped_as_warnings(outcome):
            context.log_event(as_partition_event(warning, key))
    listed = "\n".join(f"- {_version(key)}: {why}" for key, why in failed.items())
    raise dg.Failure(description=f"{len(failed)} of {len(keys)} skill versions failed:\n{listed}",
                     metadata={"failed_versions": ", ".join(map(_version, failed)), "evaluated": len(keys)},
                     allow_retries=False)


def _tag_verdicts(context: dg.AssetExecutionContext, outcomes: dict[str, PartitionOutcome],
                  failed: dict[str, str], errored: int) -> None:
    """``eval/verdict`` is the run's worst verdict, ``eval/verdicts`` counts them, so the Runs list
    filters a batch as it filters one version; each version's own verdict is on its trend point."""
    if not context.selected_asset_check_keys:
        return
    # "error": the version could not be evaluated (invalid package, missing upstream, a crash)
    verdicts = [o.verdict for o in outcomes.values() if o.verdict] + ["error"] * errored
    if not verdicts:
        return
    counts = {v: verdicts.count(v) for v in ("error", *VERDICT_ORDER) if v in verdicts}
    names = [_version(key) for key in failed][:TAGGED_FAILURES] + (["..."] if len(failed) > TAGGED_FAILURES else [])
    context.instance.add_run_tags(context.run.run_id, {
        "eval/verdict": next(iter(counts)),
        "eval/verdicts": ", ".join(f"{v}: {n}" for v, n in counts.items()),
        "eval/failed_versions": ",".join(names) or "none"})


def _version(partition_key: str) -> str:
    """``date|skill_version`` -> the skill version (a run's range is of versions on one night)."""
    return partition_key.split("|", 1)[-1]
