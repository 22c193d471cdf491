"""Figures 2 and 3 of benchmarks/run.py: `dagster asset materialize`, `eval-pipelines run`,
promptfoo and inspect_ai on the same suite and server, in alternating rounds, with the import
floors that bound what our own code can take off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from benchmarks import suites
from benchmarks.bench_project import DagsterProject
from benchmarks.series import Series, log
from benchmarks.server import MODEL, BenchServer


def cli_once(project: DagsterProject, n: int) -> float:
    """Wall s of one fresh `eval-pipelines run` on the same skill: the same engine and tables, no Dagster."""
    command = [str(Path(sys.executable).with_name("eval-pipelines")), "run",
               str(project.root / "skills" / suites.skill_name(n) / suites.BENCH_VERSION),
               "--no-cache", "--db", str(project.root / ".data" / "cli.duckdb")]
    project.server.reset()
    started = time.perf_counter()
    done = subprocess.run(command, env=project.env(), cwd=project.root, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0 or project.server.requests() != n:
        raise RuntimeError(f"eval-pipelines run failed ({done.returncode}, {project.server.requests()} "
                           f"requests):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall


CLI_COMMAND = "eval-pipelines run skills/bench-N/1.0.0 --no-cache --db <file>"


def import_once(project: DagsterProject, program: str = "import eval_pipelines.definitions") -> float:
    """Wall s of a fresh process that only runs ``program`` (an import)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", program], env=project.env(), cwd=project.root, check=True)
    return time.perf_counter() - started


# What the figures cannot go below without dropping a dependency: the import goal is bounded by
# Dagster's own import, and the CLI's by the libraries it must load before its first model call
# (the openai SDK, pandas for the stage tables, DuckDB). Imported as our code imports them, the
# garbage collector paused and what they made frozen (pipeline/collector.py): with the collector
# merely disabled, the process's exit alone runs full collections over all of it (~0.5 s here).
FLOORS = {"dagster_import": "import gc; gc.disable(); import dagster; gc.freeze()",
          "cli_libraries": "import gc; gc.disable(); import openai, pandas, duckdb; gc.freeze()"}


# ---- figure 3: promptfoo and inspect_ai -----------------------------------------

@dataclass
class OtherTool:
    """A competitor set up on the same suite and server: ``once()`` is one fresh, checked run."""

    version: str
    command: str  # as docs/benchmarks.md quotes it (no folders of this machine)
    once: Callable[[], float]
    wall: Series = field(default_factory=Series)

    def result(self) -> dict[str, Any]:
        return {"version": self.version, "wall": self.wall, "command": self.command}


def promptfoo_tool(tools: Path, work: Path, n: int, server: BenchServer) -> OtherTool | None:
    binary = tools / "node_modules" / ".bin" / "promptfoo"
    node_dir = tools / "node22" / "node_modules" / ".bin"
    if not binary.exists():
        return None
    folder = work / "promptfoo"
    suites.write_promptfoo(folder, n, server.base_url)
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
               PROMPTFOO_CONFIG_DIR=str(folder / "home"), NO_COLOR="1",
               PATH=f"{node_dir}{os.pathsep}{os.environ.get('PATH', '')}" if node_dir.exists() else os.environ["PATH"])
    command = [str(binary), "eval", "-c", "promptfooconfig.yaml", "-j", "16", "--no-cache",
               "--no-progress-bar", "--no-table", "-o", "out.json"]
    version = subprocess.run([str(binary), "--version"], env=env, capture_output=True, text=True).stdout.strip()

    def once() -> float:
        server.reset()
        started = time.perf_counter()
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        stats = json.loads((folder / "out.json").read_text())["results"]["stats"] if done.returncode in (0, 100) \
            else None
        if stats is None or stats["successes"] != n or server.requests() != n:
            raise RuntimeError(f"promptfoo run wrong: rc={done.returncode} stats={stats} "
                               f"requests={server.requests()}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return wall

    return OtherTool(version, " ".join(command).replace(str(tools), "<tools-dir>"), once)


def inspect_tool(tools: Path, work: Path, n: int, server: BenchServer) -> OtherTool | None:
    venv = tools / "inspect-venv" / "bin"
    if not (venv / "inspect").exists():
        return None
    folder = work / "inspect"
    suites.write_inspect(folder, n)
    env = dict(os.environ, BENCH_API_KEY="bench", BENCH_BASE_URL=server.base_url,
               INSPECT_LOG_DIR=str(folder / "logs"), NO_COLOR="1")
    command = [str(venv / "inspect"), "eval", "bench_task.py", "--model", f"openai-api/bench/{MODEL}",
               "--max-connections", "16", "--display", "none"]
    version = subprocess.run([str(venv / "python"), "-c", "import inspect_ai; print(inspect_ai.__version__)"],
                             capture_output=True, text=True).stdout.strip()

    def once() -> float:
        server.reset()
        started = time.perf_counter()
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        check = subprocess.run(
            [str(venv / "python"), "-c",
             "from inspect_ai.log import list_eval_logs, read_eval_log; import sys; "
             "log = read_eval_log(list_eval_logs(sys.argv[1])[0]); "
             "print(log.status, log.results.total_samples, list(log.results.scores[0].metrics.values())[0].value)",
             str(folder / "logs")], capture_output=True, text=True)
        status = check.stdout.split()
        if done.returncode != 0 or status[:2] != ["success", str(n)] or float(status[2]) != 1.0 \
                or server.requests() != n:
            raise RuntimeError(f"inspect run wrong: rc={done.returncode} {check.stdout} {check.stderr[-1000:]} "
                               f"requests={server.requests()}\n{done.stderr[-2000:]}")
        return wall

    return OtherTool(version, " ".join(command).replace(str(tools), "<tools-dir>"), once)


def side_by_side(project: DagsterProject, key: str, tools: Path, work: Path, n: int, repeats: int,
                 figures: set[int]) -> dict[str, Any]:
    """Figures 2 and 3 in alternating rounds: each round runs every tool once (the import
    floor, `dagster asset materialize`, `eval-pipelines run`, promptfoo, inspect_ai), so a
    change in the shared machine's load hits them all alike; the load average is recorded
    before each round."""
    server = project.server
    others = {"promptfoo": promptfoo_tool(tools, work, n, server), "inspect": inspect_tool(tools, work, n, server)} \
        if 3 in figures else {}
    import_floor, e2e, rss, cli = Series(), Series(), Series(), Series()
    floors = {name: Series() for name in FLOORS}
    requests: list[int] = []
    steps: list[dict[str, float]] = []
    loads: list[float] = []
    for round_ in range(repeats):
        loads.append(round(os.getloadavg()[0], 2))
        if 2 in figures:
            import_floor.add(import_once(project))
            for name, modules in FLOORS.items():
                floors[name].add(import_once(project, modules))
            server.reset()
            wall, peak, run_id = project.materialize(key, use_cache=False)
            e2e.add(wall)
            rss.add(peak / 1024)
            requests.append(server.requests())
            steps.append(project.step_seconds(run_id) if run_id else {})
        if 3 in figures:
            cli.add(cli_once(project, n))
            for tool in others.values():
                if tool is not None:
                    tool.wall.add(tool.once())
        log(f"  round {round_ + 1}/{repeats} (load {loads[-1]}): "
            + ", ".join(f"{name} {s.values[-1]:.2f} s" for name, s in
                        (("import", import_floor), *floors.items(), ("dagster", e2e), ("cli", cli),
                         *((k, t.wall) for k, t in others.items() if t is not None)) if s.values))
    results: dict[str, Any] = {"side_by_side_load": loads}
    if 2 in figures:
        results |= {"import_floor": import_floor, "floors": floors,
                    "e2e": {"wall": e2e, "rss_mb": rss, "requests": requests, "steps": steps}}
    if 3 in figures:
        results |= {"cli": {"wall": cli, "command": CLI_COMMAND},
                    **{k: (t.result() if t is not None else None) for k, t in others.items()}}
    return results
