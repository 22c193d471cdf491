"""The benchmark's Dagster project: its environment, its instance, and one fresh
`dagster asset materialize` of a partition (figures 2, 4 and 6 of benchmarks/run.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.server import BenchServer

REPO = Path(__file__).resolve().parent.parent
BENCH_DATE = "2026-01-02"  # fixed so re-runs replace rows; the runs set the partitions to start there


@dataclass
class DagsterProject:
    root: Path
    dagster_home: Path
    server: BenchServer

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "EVAL_PIPELINES_"))}
        env.update(EVAL_PIPELINES_HOME=str(self.root), DAGSTER_HOME=str(self.dagster_home),
                   EVAL_PIPELINES_START_DATE=BENCH_DATE,  # the partitions' date axis must reach BENCH_DATE
                   BENCH_BASE_URL=self.server.base_url, BENCH_API_KEY="bench",
                   PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(REPO)) if p))
        return env

    def prepare(self, keys: list[str]) -> None:
        self.dagster_home.mkdir(parents=True, exist_ok=True)
        # The project's own instance settings, with storage in this folder.
        (self.dagster_home / "dagster.yaml").write_text(
            "telemetry:\n  enabled: false\n")
        subprocess.run([sys.executable, "-c",
                        "import dagster as dg, sys; i = dg.DagsterInstance.get(); "
                        "i.add_dynamic_partitions('skill_versions', sys.argv[1:])", *keys],
                       env=self.env(), check=True, cwd=self.root)

    def materialize(self, key: str, use_cache: bool) -> tuple[float, int, str]:
        """(wall s, peak RSS KiB, run id) of one fresh `dagster asset materialize`."""
        command = [str(Path(sys.executable).with_name("dagster")), "asset", "materialize",
                   "-m", "eval_pipelines.definitions", "--select", "*",
                   "--partition", f"{BENCH_DATE}|{key}",
                   "--config-json", json.dumps({"ops": {"evaluate_partition": {"config": {"use_cache": use_cache}}}})]
        started = time.perf_counter()
        proc = subprocess.Popen(command, env=self.env(), cwd=self.root, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        text = out.decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0 or "RUN_SUCCESS" not in text:
            raise RuntimeError(f"dagster asset materialize failed:\n{text[-3000:]}")
        found = re.search(r" - ([0-9a-f-]{36}) - \d+ - RUN_SUCCESS", text)
        return wall, int(usage.ru_maxrss), found.group(1) if found else ""

    def error_outputs(self) -> int:
        """Model outputs stored as error rows (a timed-out call under load is one); -1 if unreadable."""
        import duckdb

        db = self.root / ".data" / "eval_pipelines.duckdb"
        try:
            with duckdb.connect(str(db), read_only=True) as con:
                return int(con.execute("SELECT count(error) FROM model_outputs").fetchone()[0])
        except Exception:  # noqa: BLE001 -- the caller records what the store says instead
            return -1

    def output_summary(self) -> str:
        """What the project's store holds for its model outputs (to explain a request count)."""
        import duckdb

        db = self.root / ".data" / "eval_pipelines.duckdb"
        try:
            with duckdb.connect(str(db), read_only=True) as con:
                rows = con.execute("SELECT skill_version, count(*), count(error), any_value(error) "
                                   "FROM model_outputs GROUP BY ALL").fetchall()
        except Exception as exc:  # noqa: BLE001 -- a diagnostic must not hide the anomaly
            return f"store unreadable: {exc}"
        return "; ".join(f"{v}: {n} outputs, {e} errors ({err})" for v, n, e, err in rows)

    def step_seconds(self, run_id: str) -> dict[str, float]:
        """Per-step wall time of a run, from its Dagster event log."""
        script = (
            "import dagster as dg, json, sys\n"
            "i = dg.DagsterInstance.get()\n"
            "starts, out = {}, {}\n"
            "for r in i.all_logs(sys.argv[1]):\n"
            "    e = r.dagster_event\n"
            "    if e is None: continue\n"
            "    t = e.event_type_value\n"
            "    if t == 'STEP_START': starts[e.step_key] = r.timestamp\n"
            "    elif t == 'STEP_SUCCESS': out[e.step_key] = r.timestamp - starts.get(e.step_key, r.timestamp)\n"
            "print(json.dumps(out))\n")
        done = subprocess.run([sys.executable, "-c", script, run_id], env=self.env(), cwd=self.root,
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])
