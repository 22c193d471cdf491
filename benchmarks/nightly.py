"""The nightly batch through the daemon: N skill versions x 40 cases, as the schedule runs them.

    python -m benchmarks.nightly                        # N = 10, 50, 200 (long on a loaded 2-core machine)
    python -m benchmarks.nightly --sizes 10,50 --out X.md

For each N, a temporary project (N one-version skills, 40 exact-match cases each,
the project's own ``dagster.yaml``: SQLite storage, the queued run coordinator
with ``max_concurrent_runs: 4``) and a real ``dagster-daemon run`` subprocess.
The versions are registered as dynamic partitions first (so the
``new_skill_versions`` sensor does not request runs of its own); the
``nightly_regression`` schedule is switched on (``EVAL_PIPELINES_NIGHTLY=on``)
with a daily cron at the next whole minute at least 90 s away (the daemon and its code server start within that, even on a loaded machine)
(``EVAL_PIPELINES_NIGHTLY_CRON``), so its one tick submits the night's
RunRequests exactly as at 02:00 and the queued run coordinator launches them
through the code server's run workers. (Not a cron of every minute: a schedule's
run keys are unique per tick only, so each minute would submit the night again.)

Measured per N:

- wall: from the tick's first run created to the last run finished;
- CPU: the whole daemon tree's (daemon, its code servers, which it replaces
  every minute or so, and their run workers), from /proc, each process with
  what it has reaped; and the run workers' alone, sampled each second (a lower bound);
- per run, from the event log: the model phase (``test_cases`` stored to
  ``model_outputs`` stored: the calls plus storing their rows), the worker's
  wall (RUN_STARTING to run end) and the queue wait;
- the model phase's own CPU, measured in this process on the same suite
  (``run_model_phase``), to split worker CPU into model work and the rest.

Runs go through a benchmark server answering after 50 ms (benchmarks/server.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import suites
from benchmarks.machine import cpu_model
from benchmarks.nightly_doc import median, summary, write_doc
from benchmarks.server import MODEL, BenchServer

REPO = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")
TRIGGER = "nightly_regression"
HOST = "eval_pipelines.defs.run_host"  # the warm launcher's host; its forks are the run workers


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", flush=True)


# ---- the project ---------------------------------------------------------------

def write_nightly_project(root: Path, versions: int, cases: int) -> list[str]:
    """N skills ``night-000``..., one version each with ``cases`` cases of its own.

    Each skill's prompts name the skill, so no skill's calls are answered from another's entries
    in the response cache (the server still answers "ok c<i>": the last word decides)."""
    (root / "datasets").mkdir(parents=True, exist_ok=True)
    keys = []
    for v in range(versions):
        name = f"night-{v:03d}"
        dataset = root / "datasets" / f"{name}.jsonl"
        with dataset.open("w") as out:
            for i in range(cases):
                test_id, prompt, expected = suites.case(i)
                out.write(json.dumps({"id": test_id, "input": f"[{name}] {prompt}",
                                      "assert": [{"type": "equals", "value": expected}]}) + "\n")
        skill = root / "skills" / name / suites.BENCH_VERSION
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Nightly benchmark skill {v}.\nversion: {suites.BENCH_VERSION}\n---\n"
            "Answer with 'ok' and the code.\n")
        (skill / "eval.yaml").write_text(
            f"name: {name}\ndescription: {cases} generated exact-match cases\nexecution:\n  targets: [bench]\n"
            f"  trials:\n    count: 1\ntests:\n  - file://datasets/{dataset.name}\n")
        (skill / "targets.yaml").write_text(
            f"targets:\n  - name: bench\n    type: openai\n    model: {MODEL}\n"
            "    api_key_env: BENCH_API_KEY\n    base_url_env: BENCH_BASE_URL\n"
            "    concurrency: 16\n    temperature: 0\n    max_retries: 4\n")
        keys.append(f"{name}@{suites.BENCH_VERSION}")
    shutil.copy(REPO / "dagster.yaml", root / "dagster.yaml")  # the project's instance: queued coordinator
    (root / "workspace.yaml").write_text(
        "load_from:\n  - python_module:\n      module_name: eval_pipelines.definitions\n"
        "      location_name: eval_pipelines\n")
    return keys


def tick_cron(lead_s: float = 90.0) -> str:
    """A daily cron firing once, at the first whole minute (UTC) at least ``lead_s`` from now."""
    at = datetime.fromtimestamp((time.time() + lead_s) // 60 * 60 + 60, timezone.utc)
    return f"{at.minute} {at.hour} * * *"


def project_env(root: Path, server: BenchServer) -> dict[str, str]:
    # Bytecode as an installed package has it: with PYTHONDONTWRITEBYTECODE a checkout's modules are
    # compiled from source in every run worker (a fifth of a 40-case run's CPU, measured with py-spy).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DAGSTER_", "EVAL_PIPELINES_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(DAGSTER_HOME=str(root), EVAL_PIPELINES_HOME=str(root),
               EVAL_PIPELINES_NIGHTLY="on", EVAL_PIPELINES_NIGHTLY_CRON=tick_cron(),
               BENCH_BASE_URL=server.base_url, BENCH_API_KEY="bench",
               PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(REPO)) if p))
    return env


# ---- /proc ---------------------------------------------------------------------

def _stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, own CPU s, reaped children's CPU s) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return int(fields[1]), (utime + stime) / TICKS, (cutime + cstime) / TICKS


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def tree(root_pid: int) -> dict[int, tuple[int, float, float]]:
    stats = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := _stat(int(p)))}
    members, frontier = {}, [root_pid]
    while frontier:
        pid = frontier.pop()
        if pid in stats:
            members[pid] = stats[pid]
            frontier.extend(child for child, s in stats.items() if s[0] == pid)
    return members


def tree_cpu(daemon_pid: int) -> float:
    """CPU s of every process of the daemon's tree, each with what it has reaped: exact for finished
    processes reaped inside the tree (run workers by their code server, code servers the daemon
    replaces by the daemon) and for live ones, zombies included."""
    return sum(own + reaped for _, own, reaped in tree(daemon_pid).values())


class WorkerCpu:
    """The run workers' own CPU, sampled: each worker (a ``multiprocessing`` child of a code server,
    or a fork of the warm launcher's run host, classified when first seen alive) at the last value read before it ended, so a lower bound by
    at most one sampling interval per worker."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}

    def sample(self, daemon_pid: int) -> None:
        for pid, (parent, own, reaped) in tree(daemon_pid).items():
            if pid in self.seen:
                self.seen[pid] = max(self.seen[pid], own + reaped)
            elif "spawn_main" in _cmdline(pid) or (HOST in _cmdline(pid) and HOST in _cmdline(parent)):
                self.seen[pid] = own + reaped  # a code server's spawned worker, or a fork of the warm run host

    @property
    def total(self) -> float:
        return sum(self.seen.values())


# ---- the batch -----------------------------------------------------------------

@dataclass
class RunFigures:
    queued_s: float
    worker_wall_s: float
    model_phases_s: list[float]  # per skill version of the run (one, or a batch's)

    @property
    def versions(self) -> int:
        return len(self.model_phases_s)


@dataclass
class BatchFigures:
    versions: int
    cases: int
    wall_s: float
    statuses: dict[str, int]
    worker_cpu_s: float  # sampled, a lower bound (WorkerCpu)
    tree_cpu_s: float
    runs: list[RunFigures] = field(default_factory=list)
    requests: int = 0


def _run_figures(instance, run_id: str) -> RunFigures:  # noqa: ANN001
    import dagster as dg

    starting = end = created = None
    stored: dict[tuple[str | None, str], float] = {}  # (partition, asset) -> first stored
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is None:
            continue
        kind = event.event_type
        if kind == dg.DagsterEventType.PIPELINE_ENQUEUED:
            created = record.timestamp
        elif kind == dg.DagsterEventType.PIPELINE_STARTING:
            starting = record.timestamp
        elif kind in (dg.DagsterEventType.RUN_SUCCESS, dg.DagsterEventType.RUN_FAILURE):
            end = record.timestamp
        elif kind in (dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_OBSERVATION):
            stored.setdefault((event.partition, event.asset_key.to_user_string()), record.timestamp)
    # A run over several versions logs each version's events under its partition: a model phase each.
    model = [stored[(p, "model_outputs")] - stored[(p, "test_cases")]
             for p, asset in stored if asset == "test_cases" and (p, "model_outputs") in stored]
    return RunFigures(queued_s=(starting or 0) - (created or starting or 0),
                      worker_wall_s=(end or 0) - (starting or 0), model_phases_s=model)


def versions_covered(instance, run) -> int:  # noqa: ANN001 - a DagsterInstance, a DagsterRun
    """Skill versions a run evaluates: one, or every key of its partition range (defs/run_requests.py)."""
    import dagster as dg

    from eval_pipelines.defs.partitions import eval_partitions

    start, end = run.tags.get("dagster/asset_partition_range_start"), run.tags.get("dagster/asset_partition_range_end")
    if not (start and end):
        return 1
    return len(eval_partitions.get_partition_keys_in_range(dg.PartitionKeyRange(start, end),
                                                           dynamic_partitions_store=instance))


def use_postgres_storage(root: Path) -> None:
    """The project's dagster.yaml with the team deployment's storage block (deploy/dagster.team.yaml):
    runs, events and schedules in PostgreSQL instead of SQLite files."""
    import yaml

    instance = yaml.safe_load((root / "dagster.yaml").read_text())
    instance["storage"] = yaml.safe_load((REPO / "deploy" / "dagster.team.yaml").read_text())["storage"]
    (root / "dagster.yaml").write_text(yaml.safe_dump(instance, sort_keys=False))


def run_batch(work: Path, server: BenchServer, versions: int, cases: int, timeout_s: float,
              storage_env: dict[str, str] | None = None) -> BatchFigures:
    """One batch; ``storage_env``: the DAGSTER_PG_* variables of a PostgreSQL instance (else SQLite)."""
    import dagster as dg

    root = work / f"nightly-{versions}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    keys = write_nightly_project(root, versions, cases)
    if storage_env:
        use_postgres_storage(root)
    env = project_env(root, server) | (storage_env or {})
    subprocess.run([sys.executable, "-c",
                    "import dagster as dg, sys; dg.DagsterInstance.get().add_dynamic_partitions("
                    "'skill_versions', sys.argv[1:])", *keys], env=env, cwd=root, check=True)
    server.reset()
    daemon = subprocess.Popen([str(Path(sys.executable).with_name("dagster-daemon")), "run", "-w", "workspace.yaml"],
                              env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=(root / "daemon.log").open("w"),
                              start_new_session=True)
    saved = {k: os.environ.get(k) for k in ("DAGSTER_HOME", *(storage_env or {}))}
    os.environ.update({"DAGSTER_HOME": str(root), **(storage_env or {})})
    old_cwd = os.getcwd()
    os.chdir(root)  # dagster.yaml's relative storage paths resolve against the current directory
    try:
        instance = dg.DagsterInstance.get()
        filters = dg.RunsFilter(tags={"eval/trigger": TRIGGER})
        log(f"N={versions}: daemon started, waiting for the schedule's next tick")
        deadline = time.monotonic() + timeout_s + 150
        before = None
        while time.monotonic() < deadline:
            if daemon.poll() is not None:
                raise RuntimeError(f"dagster-daemon exited: {(root / 'daemon.log').read_text()[-3000:]}")
            count = instance.get_runs_count(filters)
            if count and before is None:
                before, workers = tree_cpu(daemon.pid), WorkerCpu()
                log(f"N={versions}: tick submitted runs")
            records = instance.get_run_records(filters) if count else []
            if sum(versions_covered(instance, r.dagster_run) for r in records) < versions:
                records = []  # the tick has not submitted them all yet
            if before is not None:
                workers.sample(daemon.pid)
            if records and all(r.dagster_run.is_finished for r in records):
                break
            time.sleep(0.5 if before is None else 1.0)
        else:
            raise RuntimeError(f"N={versions}: the batch did not finish in {timeout_s:.0f} s")
        workers.sample(daemon.pid)
        after = tree_cpu(daemon.pid)
        records = instance.get_run_records(filters)
        first = min(r.create_timestamp.timestamp() for r in records)
        last = max(r.end_time or 0 for r in records)
        statuses: dict[str, int] = {}
        for r in records:
            statuses[r.dagster_run.status.value] = statuses.get(r.dagster_run.status.value, 0) + 1
        figures = BatchFigures(versions=versions, cases=cases, wall_s=last - first, statuses=statuses,
                               worker_cpu_s=workers.total, tree_cpu_s=after - before,
                               runs=[_run_figures(instance, r.dagster_run.run_id) for r in records],
                               requests=server.requests())
    finally:
        os.chdir(old_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGTERM)
            try:
                daemon.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()
    log(f"N={versions}: wall {figures.wall_s:.1f} s, tree CPU {figures.tree_cpu_s:.1f} s, workers (sampled) {figures.worker_cpu_s:.1f} s, {statuses}")
    return figures


def model_phase_cpu(work: Path, server: BenchServer, cases: int, repeats: int = 5) -> list[float]:
    """CPU s of one run's model phase (``cases`` calls at concurrency 16) in this process."""
    from eval_pipelines.formats.loader import load_skill
    from eval_pipelines.pipeline.project import ProjectPaths
    from eval_pipelines.run.engine import run_model_phase

    root = work / "model-phase"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    keys = write_nightly_project(root, 1, cases)
    paths = ProjectPaths.from_root(root, str(root / "unused.duckdb"))
    loaded = load_skill(root / "skills" / keys[0].split("@")[0] / suites.BENCH_VERSION,
                        datasets_dir=paths.datasets_dir, extract_dir=paths.work_dir,
                        project_targets=paths.project_targets())
    env = {"BENCH_BASE_URL": server.base_url, "BENCH_API_KEY": "bench"}
    asyncio.run(run_model_phase(loaded.suite, loaded.targets, loaded.package.root, env))  # warm-up
    out = []
    for _ in range(repeats):
        cpu = time.process_time()
        asyncio.run(run_model_phase(loaded.suite, loaded.targets, loaded.package.root, env))
        out.append(time.process_time() - cpu)
    return out


def main(argv: list[str] | None = None) -> int:
    import dagster
    import platform

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,50,200")
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--timeout-per-version", type=float, default=120.0,
                        help="give up on a batch after N x this many seconds")
    parser.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "eval-pipelines-nightly"))
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks-nightly.md"))
    parser.add_argument("--storage", choices=("sqlite", "postgres"), default="sqlite",
                        help="the instance's storage: the project's dagster.yaml (SQLite files) or the team "
                             "deployment's PostgreSQL (a local server started per batch)")
    parser.add_argument("--from-json", help="re-render the page from a run's JSON (no new measurement)")
    args = parser.parse_args(argv)
    if args.from_json:
        data = json.loads(Path(args.from_json).read_text())
        for row in data["batches"]:  # JSON of the first version, whose worker CPU missed replaced code servers
            if "tree_cpu_per_case_ms" not in row:
                row["tree_cpu_per_case_ms"] = row["tree_cpu_per_run_s"] * 1000 / row["cases"]
                row["worker_cpu_sampled_per_run_s"] = None
                row["overhead_cpu_per_run_s"] = row["tree_cpu_per_run_s"] - median(data["model_phase_cpu_s"])
        write_doc(Path(args.out), data["batches"], data["model_phase_cpu_s"], data["machine"], data.get("skipped", ""))
        return 0
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "eval_pipelines")],
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                   stdout=subprocess.DEVNULL, check=True)
    meta = {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "dagster": dagster.__version__, "storage": args.storage, "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    rows, skipped = [], ""
    with BenchServer(latency_ms=args.latency_ms) as server:
        model_cpu = model_phase_cpu(work, server, args.cases)
        for n in (int(x) for x in args.sizes.split(",")):
            try:
                if args.storage == "postgres":
                    from tests.support.postgres import LocalPostgres

                    with LocalPostgres(db_name=f"nightly_{n}") as postgres:
                        batch = run_batch(work, server, n, args.cases, n * args.timeout_per_version, postgres.env())
                else:
                    batch = run_batch(work, server, n, args.cases, timeout_s=n * args.timeout_per_version)
            except RuntimeError as exc:
                skipped = f"N={n} did not finish: {exc}"
                log(skipped)
                break
            rows.append(summary(batch, median(model_cpu)) | {"runs": [r.__dict__ for r in batch.runs]})
    meta["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"machine": meta, "model_phase_cpu_s": model_cpu, "batches": rows,
                                                    "skipped": skipped},
                                                   indent=1))
    write_doc(out, rows, model_cpu, meta, skipped)
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
