"""The page ``python -m benchmarks.nightly`` writes (docs/benchmarks-nightly.md) from its figures."""

from __future__ import annotations

import statistics
from pathlib import Path

ISSUE_SIZES = (10, 50, 200)  # the batch sizes issue 33 asks for


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def summary(batch, model_cpu_s: float, sampled_workers: bool = True) -> dict:  # noqa: ANN001 - a nightly.BatchFigures
    n = batch.versions
    model = median([r.model_phase_s for r in batch.runs])
    worker = median([r.worker_wall_s for r in batch.runs])
    cpu_per_run = batch.tree_cpu_s / n
    return {
        "versions": n, "cases": batch.cases, "statuses": batch.statuses, "requests": batch.requests,
        "wall_s": batch.wall_s, "wall_per_version_s": batch.wall_s / n,
        "tree_cpu_per_run_s": cpu_per_run, "tree_cpu_per_case_ms": batch.tree_cpu_s * 1000 / (n * batch.cases),
        "worker_cpu_sampled_per_run_s": batch.worker_cpu_s / n if sampled_workers else None,
        "median_model_phase_s": model, "median_worker_wall_s": worker, "median_overhead_wall_s": worker - model,
        "median_queued_s": median([r.queued_s for r in batch.runs]),
        "overhead_cpu_per_run_s": cpu_per_run - model_cpu_s,
    }


# Not figures of the run above: what a py-spy profile of one worker and a probe of Dagster showed.
FINDINGS = [
    "## Where a run's CPU goes, and what would change it",
    "",
    "(Hand-written, not regenerated: a py-spy profile, 40 samples/s, of one 40-case partition through "
    "`dagster asset materialize`, the same in-process worker code as a queued run, on the same loaded machine.) "
    "About 60% of the worker's samples are imports (Dagster itself with its components and storage modules, "
    "`eval_pipelines.definitions`, the openai client's type modules when the target is built), about 14% "
    "setting up the instance and its SQLite storage, about 19% Dagster's run and event bookkeeping, and 19% "
    "our stages, of which the 40 model calls at 50 ms are a small part. Every one of these but the stages "
    "is paid once per run, that is once per skill version: the nightly batch scales with runs, not with cases.",
    "",
    "With PYTHONDONTWRITEBYTECODE set (as in some shells and containers) every run worker also compiles the "
    "project's modules from source, a fifth of its CPU: this benchmark precompiles them and unsets it, as an "
    "installed package would have its bytecode.",
    "",
    "Several skill versions per run is the design the figures call for. What Dagster 1.13 offers for it, "
    "probed with `execute_in_process` on a date x dynamic multi-partitioned `multi_asset` with "
    "`BackfillPolicy.single_run()`: a run over a partition range (`dagster/asset_partition_range_start/end`) "
    "can yield one `AssetMaterialization(partition=...)` per skill version, so the grid keeps one partition "
    "per version; but `AssetCheckResult` takes no partition, so the per-version checks (the regression "
    "verdict) cannot be reported per partition from such a run, and a range is contiguous in key order, "
    "while a night's latest versions are not when older versions are registered. Not changed here.",
    "",
    "What it would buy, from one run of `python -m benchmarks.nightly_warm` (one process, its own SQLite "
    "instance, the `evaluate_skill_version` job through `execute_in_process` for 6 versions x 40 cases, "
    "240 model requests, 2026-11-28 at load average 16): importing the code location 2.6 s CPU, the first "
    "version 3.9 s, each further version 1.9-2.7 s (median 2.4 s), against the CPU per run above for a run "
    "per version. A run over several versions would cut the nightly's CPU several times over; the "
    "per-version remainder (our stages, the checks, Dagster's per-asset events in SQLite) sits near the "
    "2 s goal, not under it.",
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
        "at once, the warm run launcher), one run per skill version as the schedule requests them.",
        "Instance storage: " + ("PostgreSQL, the storage block of `deploy/dagster.team.yaml` (a local server)."
                                if meta.get("storage") == "postgres" else "SQLite files (the project's `dagster.yaml`)."),
        "",
        f"Machine: {meta['cpu']}, {meta['cores']} cores, Python {meta['python']}, Dagster {meta['dagster']}. "
        f"Load average (1, 5, 15 min) at start {meta['load_start']}, at end {meta['load_end']}: "
        "the machine is shared with other sessions, so CPU seconds are the sturdier figure, wall times upper bounds.",
        "",
        "| N skill versions | runs | model requests | wall | wall per version | CPU per run | CPU per case | "
        "run workers' CPU per run | model phase per run (median) | worker wall per run (median) | "
        "overhead wall per run | overhead CPU per run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        runs = ", ".join(f"{v} {k.lower()}" for k, v in sorted(r["statuses"].items()))
        lines.append(
            f"| {r['versions']} | {runs} | {r['requests']} of {r['versions'] * r['cases']} | {r['wall_s']:.1f} s | {r['wall_per_version_s']:.2f} s | "
            f"{r['tree_cpu_per_run_s']:.2f} s | {r['tree_cpu_per_case_ms']:.0f} ms | "
            f"{_sampled(r)} | {r['median_model_phase_s']:.2f} s | "
            f"{r['median_worker_wall_s']:.2f} s | {r['median_overhead_wall_s']:.2f} s | "
            f"{r['overhead_cpu_per_run_s']:.2f} s |")
    lines += [
        "",
        f"Model phase CPU of one run ({rows[0]['cases'] if rows else 40} calls at concurrency 16, measured in the "
        f"benchmark's own process, median of {len(model_cpu)}): {median(model_cpu):.3f} s. "
        "Overhead CPU per run = CPU per run minus that (an upper bound: it counts the daemon's own ticks too); overhead wall = the worker's wall "
        "(RUN_STARTING to run end) minus its model phase (test_cases stored to model_outputs stored: building "
        "the target, which imports the openai client, the calls, and storing the rows, which waits while "
        "another run holds the DuckDB file).",
        "",
    ]
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        lines.append(f"Growth from N={a['versions']} to N={b['versions']} ({b['versions'] / a['versions']:.0f}x "
                     f"the versions): wall {b['wall_s'] / a['wall_s']:.2f}x, wall per version "
                     f"{b['wall_per_version_s'] / a['wall_per_version_s']:.2f}x, CPU per run "
                     f"{b['tree_cpu_per_run_s'] / a['tree_cpu_per_run_s']:.2f}x.")
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
