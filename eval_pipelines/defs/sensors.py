"""``new_skill_versions``: every skill version dropped into the skills folder gets a run.

In one tick the sensor adds the new versions as dynamic partitions and
requests a run for each (design notes: both in one ``SensorResult``). The
cursor holds the versions already requested (and versions registered by other
means count as known), so a version is never requested twice; packages that fail to open are logged with the reason and skipped.
"""


import json
from datetime import datetime, timezone
from pathlib import Path

import dagster as dg

from eval_pipelines.defs.jobs import evaluate_skill_version
from eval_pipelines.defs.partitions import partition_key_for, skill_versions
from eval_pipelines.defs.resources import EvalProject, EvalStore
from eval_pipelines.pipeline.project import discover_skill_versions
from eval_pipelines.suite.package import partition_key_problem


# Package -> (SKILL.md stamp, key), kept by the code server between ticks: a steady tick
# over 5,000 packages stats them instead of hashing every file (docs/benchmarks.md).
_KEYS_BY_PACKAGE: dict[Path, tuple[tuple[int, int], str]] = {}
# Packages opened (hashed) per tick at most: 5,000 new packages took 93 s to open, past the
# 60 s a sensor tick may take; 500 a tick registers them over ten ticks (30 s apart).
OPEN_PER_TICK = 500


@dg.sensor(job=evaluate_skill_version, minimum_interval_seconds=30,
           default_status=dg.DefaultSensorStatus.RUNNING,
           description="Starts an evaluation run for every new skill version in the skills folder.")
def new_skill_versions(context: dg.SensorEvaluationContext, project: EvalProject, store: EvalStore) -> dg.SensorResult:
    state = _load_cursor(context.cursor)
    # Known: requested by an earlier tick (cursor) or registered by someone else
    # (the demo, a manual add in the UI), who is then responsible for its run.
    registered = set(context.instance.get_dynamic_partitions(skill_versions.name))
    known = set(state["requested"]) | registered
    found, problems = discover_skill_versions(project.paths(store.db_path), _KEYS_BY_PACKAGE,
                                              max_opened=OPEN_PER_TICK)
    refused = {}
    for source, problem in problems.items():
        fingerprint = _fingerprint(source)
        refused[str(source)] = fingerprint
        if state["refused"].get(str(source)) != fingerprint:  # log each refusal once
            context.log.warning(f"skipped package: {problem}")
    new_keys = []
    for key in sorted(found):
        if key in known:
            continue
        problem = partition_key_problem(key)
        if problem:
            context.log.warning(f"skipped {found[key]}: {problem}")
            continue
        new_keys.append(key)
    today = datetime.now(timezone.utc).date()
    requests = [
        dg.RunRequest(
            run_key=f"new-version:{key}",
            partition_key=partition_key_for(key, today),
            tags={"eval/trigger": "new_skill_version", "eval/skill_version": key},
        )
        for key in new_keys
    ]
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[skill_versions.build_add_request(new_keys)] if new_keys else [],
        cursor=json.dumps({"requested": sorted(known | set(new_keys)), "refused": refused}),
    )


def _load_cursor(cursor: str | None) -> dict:
    data = json.loads(cursor) if cursor else {}
    if isinstance(data, list):  # cursors written before refusals were remembered
        data = {"requested": data}
    return {"requested": data.get("requested", []), "refused": data.get("refused", {})}


def _fingerprint(source: Path) -> str:
    try:
        stat = source.stat()
    except OSError:
        return "missing"
    return f"{stat.st_mtime_ns}:{stat.st_size}"
