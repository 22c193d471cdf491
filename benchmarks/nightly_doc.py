"""The page ``python -m benchmarks.nightly`` writes (docs/benchmarks-nightly.md) from its figures."""

from __future__ import annotations

import statistics
from pathlib import Path

ISSUE_SIZES = (10, 50, 200)  # the batch sizes issue 33 asks for


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def summary(batch, model_cpu_s: float, sampled_workers: bool = True) -> dict:  # noqa: ANN001 - a nightly.BatchFigures
    """Figures per skill version (the goal's unit), whether a run evaluates one version or a batch."""
    n = batch.versions
    model = median([m for r in batch.runs for m in r.model_phases_s])
    # A run's wall beyond its versions' model phases, shared among its versions.
    overhead_wall = median([(r.worker_wall_s - sum(r.model_phases_s)) / max(1, r.versions) for r in batch.runs])
    cpu_per_version = batch.tree_cpu_s / n
    return {
        "versions": n, "cases": batch.cases, "statuses": batch.statuses, "requests": batch.requests,
        "wall_s": batch.wall_s, "wall_per_version_s": batch.wall_s / n,
        "tree_cpu_per_run_s": cpu_per_version, "tree_cpu_per_case_ms": batch.tree_cpu_s * 1000 / (n * batch.cases),
        "worker_cpu_sampled_per_run_s": batch.worker_cpu_s / n if sampled_workers else None,
        "median_model_phase_s": model, "median_worker_wall_s": median([r.worker_wall_s for r in batch.runs]),
        "median_overhead_wall_s": overhead_wall,
        "median_versions_per_run": median([r.versions for r in batch.runs]),
        "median_queued_s": median([r.queued_s for r in batch.runs]),
        "overhead_cpu_per_run_s": cpu_per_version - model_cpu_s,
    }


# Not figures of the run above: what py-spy profiles and earlier runs of this benchmark showed.
FINDINGS = [
    "## Where a run's CPU went, and what changed",
    "",
    "(Hand-written, not regenerated.) Each night's run per skill version used to start as a new "
    "interpreter: Dagster's default launcher has the code server spawn one (`multiprocessing` spawn), "
    "which imports Dagster, the code location, the openai client, pandas and DuckDB again before its "
    "first stage, ~60% of a run worker's samples in a py-spy profile. Two runs of this benchmark at N=10 "
    "on the idle machine, ten minutes apart (2026-11-28, load average below 1.5), the first with "
    "`DefaultRunLauncher`, the second with the warm launcher now in `dagster.yaml`: CPU per run "
    "**9.88 s -> 4.11 s**, run workers' CPU 8.45 s -> about 2 s, wall for the batch 60.3 s -> 37.5 s.",
    "",
    "The warm launcher (`eval_pipelines/defs/warm_launcher.py`, `run_host.py`) keeps one run per skill "
    "version, so the partition grid, the per-partition checks, run monitoring and cancellation are "
    "Dagster's as before; each run's worker is `os.fork()` of a host process that imported all of the "
    "above once (it refuses to fork with a second thread alive, is replaced when the code on disk "
    "changes, and the code server launches the run if the host cannot).",
    "",
    "What was left per run after that (py-spy of the whole daemon tree at 50 samples/s, N=10): "
    "Dagster's bookkeeping in SQLite. The schedule creating a run wrote one planned event per asset "
    "and check (11 + 7), about 0.6 s of the daemon's CPU per run; a run wrote about 65 events "
    "(13 step outputs, 12 materialisations, engine and check events), each through a new SQLAlchemy "
    "engine and an SQLite transaction, and Dagster's data-version bookkeeping read the upstream "
    "assets' latest records for every materialisation; our stages for 40 cases were about 0.7 s. "
    "PostgreSQL storage (`--storage postgres`, the team deployment's block) was not cheaper: "
    "N=10, 5.89 s CPU per run at load average 3 (the server's own CPU not counted). With the warm "
    "launcher alone the batch measured 4.5-5.3 s of CPU per version at N=10/50/200 (load 3-6).",
    "",
    "Growth with N in that warm-launcher run: from N=10 to N=200 the wall grew 16.7x for 20x the versions, "
    "but from N=50 to N=200 it grew 5.6x for 4x (wall per version 4.50 s -> 6.28 s) while the load "
    "average rose from about 3 to 5-6 (other benchmarks shared the machine); CPU per run rose 1.06x "
    "over the same step (4.69 s -> 4.96 s). Linear growth is not shown by this run between N=50 and "
    "N=200; a quiet re-run is needed to tell load from a cost that grows with the number of partitions "
    "(the sensor's tick reads every skill version; Dagster checks each run's partition key against "
    "the dynamic partitions).",
    "",
    "Then the design changed: **several skill versions per run**. The schedule groups the night's "
    "versions that are neighbours in Dagster's order of the dynamic partitions into batches of at "
    "most `EVAL_PIPELINES_VERSIONS_PER_RUN` (default 25) and requests one run over each batch's "
    "partition range (`defs/run_requests.py`); the step evaluates the versions one after another and "
    "logs each one's materialisations and check results under its own partition "
    "(`defs/range_run.py`), so the partition grid, the checks, the rows and the trend points are those "
    "of one run per version. A run's fixed cost (its creation, launch, worker, start and end, step "
    "events) is paid once per batch; what stays per version is one materialisation per asset, its "
    "planned event and the check results (about 26 events, against about 83 plus a run before). "
    "The first run of this benchmark after the change (N=10/50/200, load 0.4-3): CPU per version "
    "1.73 / 1.57 / 1.79 s, against 5.28 / 4.69 / 4.96 s in the warm-launcher run before it. That run "
    "also showed the batch's four runs idle about half of the wall time at N=200 (CPU 359 s in 418 s "
    "wall on 2 cores): a run waiting for the DuckDB file slept up to 2 s between attempts while "
    "holders keep it for tens of ms; the wait is now at most 0.25 s. The table above is the run "
    "after that change.",
    "",
]


def write_doc(out: Path, rows: list[dict], model_cpu: list[float], meta: dict, skipped: str) -> None:
    lines = [
        "# Nightly batch through the daemon",
        "",
        "Written by `python -m benchmarks.nightly` from one run (no figure edited by hand);",
        "the main benchmark is in [benchmarks.md](benchmarks.md). N skill versions of "
        f"{rows[0]['cases'] if rows else 40} exact-match cases each, a local",
        "OpenAI-compatible server answering after 50 ms, the `nightly_regression` schedule ticking",
        "in a real `dagster-daemon run` with the project's `dagster.yaml` (queued run coordinator, 4 runs",
        "at once, the warm run launcher), the runs as the schedule requests them (neighbouring versions share a run, at most 25 per run).",
        "Instance storage: " + ("PostgreSQL, the storage block of `deploy/dagster.team.yaml` (a local server)."
                                if meta.get("storage") == "postgres" else "SQLite files (the project's `dagster.yaml`)."),
        "",
        f"Machine: {meta['cpu']}, {meta['cores']} cores, Python {meta['python']}, Dagster {meta['dagster']}. "
        f"Load average (1, 5, 15 min) at start {meta['load_start']}, at end {meta['load_end']}: "
        "the machine is shared with other sessions, so CPU seconds are the sturdier figure, wall times upper bounds.",
        "",
        "| N skill versions | runs | versions per run (median) | model requests | wall | wall per version | "
        "CPU per version | CPU per case | run workers' CPU per version | model phase per version (median) | "
        "worker wall per run (median) | overhead wall per version | overhead CPU per version |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        runs = ", ".join(f"{v} {k.lower()}" for k, v in sorted(r["statuses"].items()))
        lines.append(
            f"| {r['versions']} | {runs} | {r.get('median_versions_per_run', 1):g} | {r['requests']} of {r['versions'] * r['cases']} | {r['wall_s']:.1f} s | {r['wall_per_version_s']:.2f} s | "
            f"{r['tree_cpu_per_run_s']:.2f} s | {r['tree_cpu_per_case_ms']:.0f} ms | "
            f"{_sampled(r)} | {r['median_model_phase_s']:.2f} s | "
            f"{r['median_worker_wall_s']:.2f} s | {r['median_overhead_wall_s']:.2f} s | "
            f"{r['overhead_cpu_per_run_s']:.2f} s |")
    lines += [
        "",
        f"Model phase CPU of one version ({rows[0]['cases'] if rows else 40} calls at concurrency 16, measured in the "
        f"benchmark's own process, median of {len(model_cpu)}): {median(model_cpu):.3f} s. "
        "Overhead CPU per version = CPU per version minus that (an upper bound: it counts the daemon's own ticks too); overhead wall per version = "
        "a run's worker wall (RUN_STARTING to run end) minus its versions' model phases, divided by its versions; a model phase (test_cases stored to model_outputs stored: building "
        "the target, which imports the openai client, the calls, and storing the rows, which waits while "
        "another run holds the DuckDB file).",
        "",
    ]
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        steps = "; ".join(f"N={x['versions']} to {y['versions']}: wall {y['wall_s'] / x['wall_s']:.2f}x for "
                          f"{y['versions'] / x['versions']:g}x the versions"
                          for x, y in zip(rows, rows[1:]))
        lines.append(f"Growth from N={a['versions']} to N={b['versions']} ({b['versions'] / a['versions']:.0f}x "
                     f"the versions): wall {b['wall_s'] / a['wall_s']:.2f}x, wall per version "
                     f"{b['wall_per_version_s'] / a['wall_per_version_s']:.2f}x, CPU per version "
                     f"{b['tree_cpu_per_run_s'] / a['tree_cpu_per_run_s']:.2f}x. Step by step: {steps}.")
        lines.append("")
    cached = [r for r in rows if r["requests"] < r["versions"] * r["cases"]]
    if cached:
        lines += ["Model requests: " + ", ".join(f"N={r['versions']}: {r['requests']} of {r['versions'] * r['cases']}"
                                                 for r in cached)
                  + " calls reached the server; the rest were served from the response cache (the skills "
                  "shared their prompts; `write_nightly_project` now gives each skill its own). The CPU per run "
                  f"would grow by at most the model phase's own CPU ({median(model_cpu):.3f} s) with every call "
                  "made, a small part of it.", ""]
    if skipped:
        lines += [skipped, ""]
    not_run = [n for n in ISSUE_SIZES if n not in {r["versions"] for r in rows}]
    if not_run and rows:
        per_version = rows[-1]["wall_per_version_s"]
        lines += [f"Not run in this run: N={', '.join(map(str, not_run))}. At the wall per version measured at "
                  f"N={rows[-1]['versions']} ({per_version:.1f} s) it would take about "
                  f"{max(not_run) * per_version / 60:.0f} min on this machine at this load.", ""]
    lines += FINDINGS
    lines += ["Columns: *CPU* is user + system CPU of the whole `dagster-daemon` process tree (the daemon, "
              "its scheduler, sensor and run-queue ticks, the code servers it starts and replaces, and the "
              "run workers they spawn) from the tick to the last run's end, read from /proc with what each "
              "process reaped; *run workers' CPU* is the workers' alone, sampled each second (a lower bound, "
              "'-' where this run did not sample it); *model requests* are the calls the server answered "
              "(the others came from the response cache); *wall* runs from the first run the tick created to the "
              "last run's end.", ""]
    out.write_text("\n".join(lines))


def _sampled(row: dict) -> str:
    value = row.get("worker_cpu_sampled_per_run_s")
    return "-" if value is None else f"{value:.2f} s"
