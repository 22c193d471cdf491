"""What one skill version costs when a process evaluates several: the floor for batched nightly runs.

    python -m benchmarks.nightly_warm               # 6 versions x 40 cases, 50 ms latency

In one fresh process (its own temporary DAGSTER_HOME with SQLite storage, as the
daemon's runs have), imports the code location and runs the
``evaluate_skill_version`` job (every asset and check) with ``execute_in_process``
for one partition after another. The first pays the imports and first-use set-up
a run worker pays today; the others show what each further version would cost if
one run covered several. Prints JSON: CPU and wall of the import and of each
partition.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.nightly import write_nightly_project
from benchmarks.server import BenchServer

REPO = Path(__file__).resolve().parent.parent

INNER = """
import json, sys, time
cpu, wall = time.process_time(), time.perf_counter()
import dagster as dg
from eval_pipelines.definitions import defs
imported = {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}
instance = dg.DagsterInstance.get()
keys = sys.argv[2:]
instance.add_dynamic_partitions("skill_versions", keys)
job = defs.resolve_job_def("evaluate_skill_version")
runs = []
for key in keys:
    cpu, wall = time.process_time(), time.perf_counter()
    result = job.execute_in_process(instance=instance, partition_key=f"{sys.argv[1]}|{key}", raise_on_error=False)
    runs.append({"key": key, "success": result.success, "cpu_s": time.process_time() - cpu,
                 "wall_s": time.perf_counter() - wall})
print(json.dumps({"import": imported, "runs": runs}))
"""


def measure(work: Path, server: BenchServer, versions: int, cases: int) -> dict:
    root = work / "warm"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    keys = write_nightly_project(root, versions, cases)
    (root / "dagster.yaml").write_text("telemetry:\n  enabled: false\nstorage:\n  sqlite:\n    base_dir: .dagster/storage\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DAGSTER_", "EVAL_PIPELINES_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(DAGSTER_HOME=str(root), EVAL_PIPELINES_HOME=str(root), BENCH_BASE_URL=server.base_url,
               BENCH_API_KEY="bench", PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(REPO)) if p))
    today = datetime.now(timezone.utc).date().isoformat()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", INNER, today, *keys], env=env, cwd=root, capture_output=True,
                          text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = time.perf_counter() - started
    out["requests"] = server.requests()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=6)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "eval-pipelines-nightly-warm"))
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    with BenchServer(latency_ms=args.latency_ms) as server:
        out = measure(Path(args.work_dir), server, args.versions, args.cases)
    out["load_average"] = {"start": load_start, "end": os.getloadavg()}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
