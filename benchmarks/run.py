"""Every speed and scale figure in one run; writes docs/benchmarks.md.

    python -m benchmarks.run                     # full run (about 10-15 min on 2 cores)
    python -m benchmarks.run --quick --out X.md  # smoke run with small N (CI runs this)

Figures (numbers as in issue #8):
  0. the benchmark server's own ceiling (requests/s at zero latency);
  1. model stage: 1,000 cases at 50 ms, concurrency 16 and 64, wall / (N*latency/C);
  2. end to end: ``dagster asset materialize`` of one 1,000-case partition, fresh process;
  3. promptfoo and inspect_ai on the same suite and server (installed in --tools-dir);
  4. cached re-run: requests made and wall time;
  5. grading throughput on 1,000,000 stored outputs (batch path, and the per-output path for reference);
  6. scale: 1k / 10k / 100k cases end to end, peak RSS and time per case;
  7. CPU ms per model call in our code beyond the openai client.

promptfoo and inspect_ai are not dependencies: install them in a scratch folder
(see docs/benchmarks.md, "Reproduce"); when they are missing, figure 3 says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import tempfile
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks import suites
from benchmarks.bench_project import BENCH_DATE, REPO, DagsterProject
from benchmarks.series import Series, log
from benchmarks.server import MODEL, BenchServer, measure_ceiling
from benchmarks.side_by_side import side_by_side



@dataclass
class Sizes:
    cases: int = 1000
    latency_ms: float = 50.0
    repeats: int = 5
    ceiling_requests: int = 5000
    grading_cases: int = 10_000
    grading_trials: int = 100
    scale: tuple[int, ...] = (1000, 10_000, 100_000)
    scale_repeats: tuple[int, ...] = (3, 2, 1)
    cpu_calls: int = 2000

    @classmethod
    def quick(cls) -> "Sizes":
        return cls(cases=40, latency_ms=20, repeats=1, ceiling_requests=300, grading_cases=200,
                   grading_trials=10, scale=(20, 60), scale_repeats=(1, 1), cpu_calls=60)


# ---- environment ------------------------------------------------------------

def machine() -> dict[str, str]:
    import dagster
    import duckdb
    import openai
    import pandas

    from benchmarks.machine import cpu_model

    mem = "unknown"
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu": cpu_model(), "cores": str(os.cpu_count()), "memory": mem,
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version(),
            "dagster": dagster.__version__, "duckdb": duckdb.__version__, "openai": openai.__version__,
            "pandas": pandas.__version__,
            "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg())}


# ---- figure 1 and 7: the model stage in process -------------------------------

def _loaded(project: Path, n: int):  # noqa: ANN202
    from eval_pipelines.pipeline.project import ProjectPaths
    from eval_pipelines.formats.loader import load_skill

    paths = ProjectPaths.from_root(project, str(project / ".data" / "unused.duckdb"))
    return load_skill(project / "skills" / suites.skill_name(n) / suites.BENCH_VERSION,
                      datasets_dir=paths.datasets_dir, extract_dir=paths.work_dir,
                      project_targets=paths.project_targets())


def model_stage(server: BenchServer, project: Path, n: int, concurrency: int, repeats: int) -> dict[str, Any]:
    from eval_pipelines.run.engine import run_model_phase

    loaded = _loaded(project, n)
    env = {"BENCH_BASE_URL": server.base_url, "BENCH_API_KEY": "bench"}
    ideal = n * server.latency_ms / 1000 / concurrency
    walls, ratios, cpus = Series(), Series(), Series()
    for _ in range(repeats):
        server.reset()
        started, cpu = time.perf_counter(), time.process_time()
        outputs = asyncio.run(run_model_phase(loaded.suite, loaded.targets, loaded.package.root, env,
                                              concurrency=concurrency))
        wall = time.perf_counter() - started
        cpus.add((time.process_time() - cpu) * 1000 / n)
        bad = [o for o in outputs if o.error or o.output != suites.case(int(o.test_id[5:]))[2]]
        if bad or len(outputs) != n or server.requests() != n:
            raise RuntimeError(f"model stage: {len(bad)} wrong outputs, {server.requests()} requests for {n}")
        walls.add(wall)
        ratios.add(wall / ideal)
    return {"concurrency": concurrency, "ideal_s": ideal, "wall": walls, "ratio": ratios, "cpu_ms_per_call": cpus}


async def _bare_client_cpu(base_url: str, n: int, concurrency: int, use_create: bool) -> float:
    """CPU ms per call of the openai client alone: the same calls, nothing else."""
    import openai

    client = openai.AsyncOpenAI(api_key="bench", base_url=base_url, max_retries=0,
                                http_client=openai.DefaultAioHttpClient())
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        _, prompt, _ = suites.case(i)
        messages = [{"role": "user", "content": prompt}]
        async with sem:
            if use_create:
                await client.chat.completions.create(model=MODEL, messages=messages, temperature=0)
            else:
                await client.post("/chat/completions", cast_to=object,
                                  body={"model": MODEL, "messages": messages, "temperature": 0},
                                  options={"security": {"bearer_auth": True}})

    await one(0)  # connection set-up and lazy imports stay out of the figure
    cpu = time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    used = time.process_time() - cpu
    await client.close()
    return used * 1000 / n


def cpu_per_call(server: BenchServer, project: Path, n: int, repeats: int) -> dict[str, Series]:
    from eval_pipelines.run.engine import run_model_phase

    loaded = _loaded(project, n)
    env = {"BENCH_BASE_URL": server.base_url, "BENCH_API_KEY": "bench"}
    ours, bare_post, bare_create = Series(), Series(), Series()
    previous = server.latency_ms
    server.set_latency(0)
    try:
        # One warm-up so imports and first connections are not counted.
        asyncio.run(run_model_phase(loaded.suite, loaded.targets, loaded.package.root, env, concurrency=16))
        for _ in range(repeats):
            cpu = time.process_time()
            asyncio.run(run_model_phase(loaded.suite, loaded.targets, loaded.package.root, env, concurrency=16))
            ours.add((time.process_time() - cpu) * 1000 / n)
            bare_post.add(asyncio.run(_bare_client_cpu(server.base_url, n, 16, use_create=False)))
            bare_create.add(asyncio.run(_bare_client_cpu(server.base_url, n, 16, use_create=True)))
    finally:
        server.set_latency(previous)
    return {"ours": ours, "bare_post": bare_post, "bare_create": bare_create}


# ---- figure 5: grading throughput -------------------------------------------------

def grading_throughput(cases: int, trials: int, repeats: int, work: Path) -> dict[str, Any]:
    import pandas as pd

    from eval_pipelines.grading.dispatch import agrade_outputs, grade_frame
    from eval_pipelines.suite.models import Assertion, Message, Suite, TestCase
    from eval_pipelines.store import tables
    from eval_pipelines.store.connection import Partition, connect, read_partition, replace_partition

    suite = Suite(name="grading", format="eval-yaml", source_file=str(work / "eval.yaml"), tests=[
        TestCase(id=suites.case(i)[0], input=[Message(content=suites.case(i)[1])],
                 assertions=[Assertion(type="equals", config={"value": suites.case(i)[2]})])
        for i in range(cases)])
    partition = Partition(BENCH_DATE, "grading@1.0.0")
    n = cases * trials
    test_ids = [suites.case(i)[0] for i in range(cases)]
    answers = [suites.case(i)[2] for i in range(cases)]
    outputs = pd.DataFrame({
        "test_id": [t for t in test_ids for _ in range(trials)],
        "target": "bench", "trial": [k for _ in range(cases) for k in range(trials)],
        # Half right, half wrong: both branches of the grader are exercised.
        "output": [a if k % 2 == 0 else a.upper() for a in answers for k in range(trials)],
        "error": None, "latency_ms": 1.0, "prompt_tokens": 12, "completion_tokens": 3, "cost_usd": None,
        "cached": False, "attempts": 1, "llm_calls": 1, "tool_calls": 0, "trace": "[]",
    })
    compute, with_db = Series(), Series()
    db = work / "grading.duckdb"
    db.unlink(missing_ok=True)
    with connect(str(db)) as con:
        base = tables.partition_columns(partition, "bench", suite.name)
        replace_partition(con, "model_outputs", partition,
                          outputs.assign(**base, created_at=datetime.now(timezone.utc).replace(tzinfo=None)))
    for _ in range(repeats):
        started = time.perf_counter()
        rows = grade_frame(suite, outputs, tables.decode_outputs, suite_dir=work)
        compute.add(n / (time.perf_counter() - started))
        if len(rows) != n or int(rows["passed"].sum()) != n // 2:
            raise RuntimeError(f"grading: {len(rows)} rows, {rows['passed'].sum()} passed for {n}")
        del rows
        started = time.perf_counter()
        with connect(str(db)) as con:
            stored_outputs = read_partition(con, "model_outputs", partition)
        rows = tables.encode_grades(grade_frame(suite, stored_outputs, tables.decode_outputs, suite_dir=work),
                                    partition, "bench", suite.name)
        with connect(str(db)) as con:
            replace_partition(con, "grades", partition, rows)
        with_db.add(n / (time.perf_counter() - started))
        del rows, stored_outputs
    # The per-output path (what every grade went through before batching), on a slice.
    sample = min(n, 20_000)
    sliced = tables.decode_outputs(outputs.head(sample))
    started = time.perf_counter()
    asyncio.run(agrade_outputs(suite, sliced, work))
    per_output = sample / (time.perf_counter() - started)
    db.unlink(missing_ok=True)
    return {"outputs": n, "cases": cases, "trials": trials, "compute": compute, "with_db": with_db,
            "per_output_path": per_output, "per_output_sample": sample}


# ---- the run ------------------------------------------------------------------------

def run(sizes: Sizes, work: Path, tools: Path, out: Path, quick: bool,
        only: set[int] | None = None) -> dict[str, Any]:
    """All figures (or ``only`` some: then just the JSON is written, for before/after runs)."""
    want = (lambda figure: only is None or figure in only)
    results: dict[str, Any] = {"machine": machine(), "sizes": sizes.__dict__, "started": datetime.now(timezone.utc),
                               "argv": sys.argv[1:]}
    work.mkdir(parents=True, exist_ok=True)
    # Every run starts from empty stores and instances: what an earlier run left (its rows, its
    # runs) changes what a run costs. Re-writing one suites row over a store that holds a
    # 100,000-case suite made the checkpoint rewrite that suite's spec: +140 MB (notes below).
    for leftover in ("project/.data", "scale/.data", "dagster_home", "dagster_home_scale"):
        shutil.rmtree(work / leftover, ignore_errors=True)
    project_root = work / "project"
    keys = [suites.write_project(project_root, sizes.cases, concurrency=16)]
    cpu_calls = sizes.cases if quick else sizes.cpu_calls
    if cpu_calls != sizes.cases:
        suites.write_project(project_root, cpu_calls, concurrency=16)
    scale_root = work / "scale"
    scale_keys = [suites.write_project(scale_root, n, concurrency=64) for n in sizes.scale]

    partial = out.with_suffix(".partial.json")

    def save() -> None:  # a long run that fails late keeps what it measured
        partial.write_text(json.dumps(results, default=_plain, indent=1))

    with BenchServer(sizes.latency_ms) as server:
        if want(0):
            log("figure 0: server ceiling")
            results["ceiling_rps"] = Series([measure_ceiling(server, sizes.ceiling_requests, 64)
                                             for _ in range(max(1, min(3, sizes.repeats)))])
        if want(1):
            log("figure 1: model stage")
            results["model_stage"] = [model_stage(server, project_root, sizes.cases, c, sizes.repeats)
                                      for c in (16, 64)]
            save()

        project = DagsterProject(project_root, work / "dagster_home", server)
        project.prepare(keys)
        figures = {f for f in (2, 3) if want(f)}
        if figures:
            log(f"figures {', '.join(map(str, sorted(figures)))}: dagster asset materialize, eval-pipelines run, "
                "promptfoo and inspect_ai, alternating, each a fresh process")
            results |= side_by_side(project, keys[0], tools, work, sizes.cases, sizes.repeats, figures)
            save()

        if want(4):
            log("figure 4: cached re-run")
            # Fill the response cache. Error rows are never cached, so a call that failed under
            # load would be requested again by the "cached" run: fill until none failed (the
            # re-fill asks only for what is missing), recording any such run.
            for _ in range(3):
                project.materialize(keys[0], use_cache=True)
                if project.error_outputs() == 0:
                    break
                anomaly = f"cache fill: {project.output_summary()}"
                log(f"  {anomaly}")
                results.setdefault("anomalies", []).append(anomaly)
            cached, cached_requests = Series(), []
            for _ in range(max(1, min(3, sizes.repeats))):
                server.reset()
                cached.add(project.materialize(keys[0], use_cache=True)[0])
                cached_requests.append(server.requests())
            results["cached"] = {"wall": cached, "requests": cached_requests}
            save()

        if want(7):
            log("figure 7: CPU per call")
            results["cpu"] = cpu_per_call(server, project_root, cpu_calls, sizes.repeats)
            save()

        if want(6):
            log("figure 6: scale")
            server.set_latency(0)
            scale_project = DagsterProject(scale_root, work / "dagster_home_scale", server)
            scale_project.prepare(scale_keys)
            scale = []
            for n, key, repeats in zip(sizes.scale, scale_keys, sizes.scale_repeats):
                walls, peaks = Series(), Series()
                for _ in range(repeats):
                    for attempt in (1, 2):
                        server.reset()
                        wall, peak, _ = scale_project.materialize(key, use_cache=False)
                        if server.requests() == n:
                            break
                        # Seen once under heavy load: fewer requests than cases. Keep what the
                        # store says about it, and measure again rather than publish a wrong figure.
                        anomaly = f"scale {n}: {server.requests()} requests; {scale_project.output_summary()}"
                        log(f"  {anomaly}")
                        results.setdefault("anomalies", []).append(anomaly)
                        if attempt == 2:
                            raise RuntimeError(anomaly)
                    walls.add(wall)
                    peaks.add(peak / 1024)
                scale.append({"cases": n, "wall": walls, "rss_mb": peaks})
                log(f"  {n} cases: {walls.text()}, peak RSS {peaks.median:.0f} MB")
                save()
            results["scale"] = scale

    if want(5):
        log("figure 5: grading throughput")
        results["grading"] = grading_throughput(sizes.grading_cases, sizes.grading_trials,
                                                max(1, min(3, sizes.repeats)), work)
    results["finished"] = datetime.now(timezone.utc)
    if only is None:
        from benchmarks.report import write_markdown

        write_markdown(results, out, quick=quick, argv=sys.argv[1:])
    (out.with_suffix(".json")).write_text(json.dumps(results, default=_plain, indent=1))
    partial.unlink(missing_ok=True)
    log(f"wrote {out if only is None else out.with_suffix('.json')}")
    return results


def _plain(value: Any) -> Any:
    if isinstance(value, Series):
        return value.values
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N, one repeat (the CI smoke run)")
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    parser.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "eval-pipelines-bench"))
    parser.add_argument("--tools-dir", default=os.environ.get("BENCH_TOOLS_DIR", str(REPO / ".bench-tools")),
                        help="folder with node_modules/.bin/promptfoo and inspect-venv/ (not committed)")
    parser.add_argument("--repeats", type=int, help="override the number of repeats")
    parser.add_argument("--only", help="comma-separated figure numbers; writes only the JSON (before/after runs)")
    args = parser.parse_args(argv)
    sizes = Sizes.quick() if args.quick else Sizes()
    if args.repeats:
        sizes.repeats = args.repeats
    only = {int(x) for x in args.only.split(",")} if args.only else None
    run(sizes, Path(args.work_dir).resolve(), Path(args.tools_dir).resolve(), Path(args.out), args.quick, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
