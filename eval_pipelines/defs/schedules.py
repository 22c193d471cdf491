"""``nightly_regression``: re-run the latest version of every skill each night.

``build_schedule_from_partitioned_job`` refuses dynamic partitions (design
notes), so this is a plain schedule that lists the registered versions and
requests runs for the scheduled date, which adds a new history partition per
version instead of overwriting the previous night's. Versions that are neighbours
in Dagster's order share a run (``defs/run_requests.py``): Dagster's cost per run,
not the model calls, decided how many skills a night could re-check.

Off by default: with a paid model in ``targets.yaml``, opening the UI must not
commit anyone to a full re-evaluation every night. Turn it on in the UI
(Automation -> nightly_regression -> toggle; the daemon remembers it) or set
``EVAL_PIPELINES_NIGHTLY=on`` where the code location loads (``EVAL_PIPELINES_NIGHTLY=on make ui``, a deployment).
"""


import os

import dagster as dg

from eval_pipelines.defs.jobs import evaluate_skill_version
from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.defs.run_requests import batch_run_request, neighbour_batches, versions_per_run
from eval_pipelines.analysis.versions import latest_versions

NIGHTLY_CRON = os.environ.get("EVAL_PIPELINES_NIGHTLY_CRON", "0 2 * * *")
NIGHTLY_SWITCH = "EVAL_PIPELINES_NIGHTLY"


def nightly_default_status(environ: dict[str, str] | None = None) -> dg.DefaultScheduleStatus:
    """Stopped unless ``EVAL_PIPELINES_NIGHTLY`` is on (``on``, ``1``, ``true``, ``yes``)."""
    value = (os.environ if environ is None else environ).get(NIGHTLY_SWITCH, "").strip().lower()
    return dg.DefaultScheduleStatus.RUNNING if value in ("on", "1", "true", "yes") else dg.DefaultScheduleStatus.STOPPED


@dg.schedule(job=evaluate_skill_version, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC",
             default_status=nightly_default_status(),
             description="Nightly drift check: the latest version of every skill, re-evaluated.")
def nightly_regression(context: dg.ScheduleEvaluationContext):
    keys = context.instance.get_dynamic_partitions(skill_versions.name)
    if not keys:
        return dg.SkipReason("no skill versions registered yet")
    night = context.scheduled_execution_time.date()
    latest = set(latest_versions(keys).values())
    max_runtime_s = context.instance.run_monitoring_max_runtime_seconds if context.instance.run_monitoring_enabled else 0
    return [batch_run_request(batch, night, f"nightly:{night.isoformat()}", {"eval/trigger": "nightly_regression"},
                              max_runtime_s)
            for batch in neighbour_batches(keys, latest, versions_per_run())]
