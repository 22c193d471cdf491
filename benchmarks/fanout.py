"""The nightly fan-out at marketplace scale: 5,000 registered skill versions.

In a temporary Dagster instance (SQLite, as ``dg.instance_for_test``) and a
temporary skills folder of N one-version skills (copies of the bundled
string-reverse package under new names), measures:

- registering N dynamic partitions (``add_dynamic_partitions``);
- one tick of the ``new_skill_versions`` sensor (``build_sensor_context``): the
  first tick (every version new: N run requests) and a steady tick (nothing new),
  with the size of the cursor it keeps;
- one evaluation of the ``nightly_regression`` schedule (``build_schedule_context``):
  the run requests of one night;
- the partition count of date x version over 30/90/365 days against Dagster's
  recommended maximum of 100,000 per asset, with and without the bounded date
  window (``EVAL_PIPELINES_HISTORY_DAYS``, eval_pipelines/defs/partitions.py);
- how long the run queue takes to drain one night's requests at given run
  concurrencies (arithmetic on a measured run time).

    python -m benchmarks.fanout                  # N = 5,000 (a few minutes)
    python -m benchmarks.fanout --versions 500   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
DAGSTER_MAX_PARTITIONS = 100_000


def make_skills(folder: Path, n: int) -> None:
    template = PROJECT / "skills" / "string-reverse" / "1.0.0"
    text = (template / "SKILL.md").read_text()
    for i in range(n):
        target = folder / f"skill-{i:05d}" / "1.0.0"
        shutil.copytree(template, target)
        (target / "SKILL.md").write_text(text.replace("name: string-reverse", f"name: skill-{i:05d}"))


def timed(fn):  # noqa: ANN001, ANN201
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def measure(n: int, run_seconds: float) -> dict:
    import dagster as dg

    scratch = Path(tempfile.mkdtemp(prefix="fanout-"))
    try:
        skills = scratch / "skills"
        _, make_s = timed(lambda: make_skills(skills, n))
        os.environ["EVAL_PIPELINES_SKILLS_DIR"] = str(skills)
        from eval_pipelines.defs.partitions import skill_versions
        from eval_pipelines.defs.resources import EvalProject, EvalStore
        from eval_pipelines.defs.schedules import nightly_regression
        from eval_pipelines.defs.sensors import new_skill_versions

        resources = {"project": EvalProject(root=str(scratch), skills_dir=str(skills)),
                     "store": EvalStore(db_path=str(scratch / "eval.duckdb"))}
        out: dict = {"versions": n, "make_skills_s": make_s}
        with dg.instance_for_test() as instance:
            # first tick: every version is new (the sensor registers them itself)
            # ticks until every version is registered (the sensor opens OPEN_PER_TICK a tick)
            cursor, keys, ticks = None, [], []
            while len(keys) < n and len(ticks) < 100:
                ctx = dg.build_sensor_context(instance=instance, resources=resources, cursor=cursor)
                tick, seconds = timed(lambda: new_skill_versions(ctx))
                ticks.append((seconds, len(tick.run_requests)))
                added = sorted(tick.dynamic_partitions_requests[0].partition_keys) if tick.dynamic_partitions_requests else []
                keys += added
                _, reg_s = timed(lambda: instance.add_dynamic_partitions(skill_versions.name, added))
                out["register_partitions_s"] = out.get("register_partitions_s", 0.0) + reg_s
                cursor = tick.cursor
            out["sensor_ticks_to_register_all"] = len(ticks)
            out["sensor_first_tick_s"], out["sensor_first_tick_requests"] = ticks[0]
            out["sensor_slowest_tick_s"] = max(s for s, _ in ticks)
            first = tick
            out["cursor_bytes"] = len(first.cursor or "")
            # steady tick: nothing new, the cursor holds every version
            ctx = dg.build_sensor_context(instance=instance, resources=resources, cursor=first.cursor)
            steady, out["sensor_steady_tick_s"] = timed(lambda: new_skill_versions(ctx))
            out["sensor_steady_tick_requests"] = len(steady.run_requests)
            _, out["get_partitions_s"] = timed(lambda: instance.get_dynamic_partitions(skill_versions.name))
            night = datetime(2026, 11, 28, 2, 0, tzinfo=timezone.utc)
            sctx = dg.build_schedule_context(instance=instance, scheduled_execution_time=night)
            requests, out["schedule_tick_s"] = timed(lambda: list(nightly_regression(sctx)))
            out["schedule_requests"] = len(requests)
            out["schedule_requests_json_bytes"] = len(json.dumps([r.run_key for r in requests]))
        out["partitions"] = {days: n * days for days in (30, 90, 365)}
        out["days_within_limit"] = DAGSTER_MAX_PARTITIONS // n
        out["queue_hours"] = {c: round(n * run_seconds / c / 3600, 1) for c in (2, 6, 12, 24, 48)}
        out["run_seconds"] = run_seconds
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def markdown(f: dict) -> str:
    n = f["versions"]
    lines = [
        f"{n:,} registered skill versions (one version each of {n:,} skills):", "",
        "| what | measured |", "|---|---|",
        f"| register {n:,} dynamic partitions (`add_dynamic_partitions`) | {f['register_partitions_s']:.1f} s |",
        f"| sensor, first tick ({f['sensor_first_tick_requests']:,} new versions -> run requests) "
        f"| {f['sensor_first_tick_s']:.1f} s |",
        f"| sensor, ticks until all {n:,} are registered (slowest tick) "
        f"| {f['sensor_ticks_to_register_all']} ({f['sensor_slowest_tick_s']:.1f} s) |",
        f"| sensor, steady tick (nothing new; {f['sensor_steady_tick_requests']} requests) "
        f"| {f['sensor_steady_tick_s']:.1f} s |",
        f"| sensor cursor (every requested version) | {f['cursor_bytes'] / 1024:.0f} KiB |",
        f"| read the registered versions (`get_dynamic_partitions`) | {f['get_partitions_s'] * 1000:.0f} ms |",
        f"| nightly schedule, one evaluation ({f['schedule_requests']:,} run requests) | {f['schedule_tick_s']:.1f} s |",
        "", "| date partitions kept | partitions (date x version) | within Dagster's 100,000? |", "|---|---|---|",
    ]
    for days, count in f["partitions"].items():
        lines.append(f"| {days} days | {count:,} | {'yes' if count <= DAGSTER_MAX_PARTITIONS else 'no'} |")
    lines += ["", f"Longest date window within 100,000 partitions: {f['days_within_limit']} days.", "",
              f"| runs at once | one night's {n:,} runs of {f['run_seconds']:.0f} s drain in |", "|---|---|"]
    for c, hours in f["queue_hours"].items():
        lines.append(f"| {c} | {hours} h |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=5000)
    parser.add_argument("--run-seconds", type=float, default=60.0,
                        help="one run's wall time on a worker (the queue arithmetic)")
    args = parser.parse_args()
    figures = measure(args.versions, args.run_seconds)
    print(json.dumps(figures, indent=1, default=str))
    print()
    print(markdown(figures))


if __name__ == "__main__":
    main()
