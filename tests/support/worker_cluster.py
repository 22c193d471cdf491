"""The team setup on one machine, every service started here: PostgreSQL (the Dagster
instance and the results store), Redis (the Celery broker and result backend), N
Celery workers (``dagster-celery worker start`` with deploy/celery.yaml) and a Dagster
daemon, with deploy/dagster.workers.yaml as the instance (its timings shortened so a
dead worker is noticed within a test's patience).

Each worker and the daemon run in their own process group (``start_new_session``),
so a test can SIGKILL one worker with every process under it, as a lost machine.
``why_unavailable()`` names what is missing (binaries or packages) for ``pytest.skip``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from tests.support.postgres import LocalPostgres, free_port
from tests.support.postgres import why_unavailable as postgres_missing
from tests.support.stores import fresh_database

PROJECT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
QUEUE = "eval-runs"


def why_unavailable() -> str | None:
    reason = postgres_missing()
    if reason:
        return reason
    if shutil.which("redis-server") is None:
        return "redis-server not found: apt-get install -y redis-server"
    for module in ("dagster_celery", "psycopg", "redis", "dagster_postgres"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: pip install -e '.[dev]'"
    if not (BIN / "dagster-celery").exists() or not (BIN / "dagster-daemon").exists():
        return "dagster-celery / dagster-daemon scripts not found beside the Python interpreter"
    return None


def instance_yaml(max_runtime_s: int) -> dict:
    """deploy/dagster.workers.yaml with the timings a test can wait for."""
    config = yaml.safe_load((PROJECT / "deploy" / "dagster.workers.yaml").read_text())
    config["run_coordinator"]["config"]["dequeue_interval_seconds"] = 1
    config["run_monitoring"].update(poll_interval_seconds=3, max_runtime_seconds=max_runtime_s,
                                    start_timeout_seconds=120)
    return config


class WorkerCluster:
    def __init__(self, skills: list[str], workers: int = 3, max_runtime_s: int = 120) -> None:
        self.skills = skills  # folders under skills/, e.g. "calculator/v1.0.0"
        self.n_workers = workers
        self.max_runtime_s = max_runtime_s
        self.base = Path(tempfile.mkdtemp(prefix="evalcluster-"))
        self.root = self.base / "project"
        self.home = self.base / "dagster_home"
        self.pg = LocalPostgres(db_name="dagster_instance")
        self.redis: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.daemon: subprocess.Popen | None = None
        self.results_db = ""
        self.env: dict[str, str] = {}

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> "WorkerCluster":
        for folder in self.skills:
            shutil.copytree(PROJECT / "skills" / folder, self.root / "skills" / folder)
        shutil.copytree(PROJECT / "datasets", self.root / "datasets")  # suites read their rows
        shutil.copy(PROJECT / "targets.yaml", self.root / "targets.yaml")
        shutil.copy(PROJECT / "workspace.yaml", self.root / "workspace.yaml")
        self.home.mkdir()
        self.pg.start()
        self.results_db = fresh_database(self.pg)
        redis_port = free_port()
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.base)],
            stdout=open(self.base / "redis.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
        self.env = {**os.environ, **self.pg.env(),
                    "DAGSTER_HOME": str(self.home), "EVAL_PIPELINES_HOME": str(self.root),
                    "EVAL_PIPELINES_DB": self.results_db,
                    "EVAL_PIPELINES_BROKER": f"redis://127.0.0.1:{redis_port}/0",
                    "EVAL_PIPELINES_BACKEND": f"redis://127.0.0.1:{redis_port}/1",
                    "PYTHONPATH": str(PROJECT),
                    # dagster-celery starts `celery` by name: the venv's scripts first
                    "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        ours = {k: v for k, v in self.env.items() if k.startswith(("DAGSTER_", "EVAL_PIPELINES_"))}
        self._saved = {k: os.environ.get(k) for k in ours}  # restored by stop()
        os.environ.update(ours)
        (self.home / "dagster.yaml").write_text(yaml.safe_dump(instance_yaml(self.max_runtime_s)))
        self._wait(lambda: self._redis_ping(redis_port), 30, "redis did not answer")
        for i in range(self.n_workers):
            self.workers.append(self._worker(i))
        return self

    def start_daemon(self) -> None:
        """The daemon: backfills, the run queue, run monitoring and retries (and the sensor and
        schedule unless stopped first, see ``stop_triggers``)."""
        self.daemon = self._spawn("daemon", [str(BIN / "dagster-daemon"), "run", "-w", "workspace.yaml"])

    def workspace(self):  # noqa: ANN201 - a WorkspaceProcessContext on this project
        import dagster as dg
        from dagster._core.workspace.context import WorkspaceProcessContext
        from dagster._core.workspace.load_target import WorkspaceFileTarget

        return WorkspaceProcessContext(dg.DagsterInstance.get(),
                                       WorkspaceFileTarget([str(self.root / "workspace.yaml")]))

    def stop_triggers(self) -> None:
        """Stop the new-version sensor and the nightly schedule (both RUNNING by default), so the
        only runs are the ones a test launches."""
        import dagster as dg

        instance = dg.DagsterInstance.get()
        cwd = os.getcwd()
        os.chdir(self.root)
        try:
            with self.workspace() as wpc:
                location = wpc.create_request_context().get_code_location("eval_pipelines")
                repo = next(iter(location.get_repositories().values()))
                for sensor in repo.get_sensors():
                    instance.stop_sensor(sensor.get_remote_origin_id(), sensor.selector_id, sensor)
                for schedule in repo.get_schedules():
                    instance.stop_schedule(schedule.get_remote_origin_id(), schedule.selector_id, schedule)
        finally:
            os.chdir(cwd)

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        return subprocess.Popen(argv, cwd=self.root, env=self.env, start_new_session=True,
                                stdout=open(self.base / f"{name}.log", "a"), stderr=subprocess.STDOUT)

    def _worker(self, i: int) -> subprocess.Popen:
        return self._spawn(f"worker{i}", [
            str(BIN / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app",
            "-y", str(PROJECT / "deploy" / "celery.yaml"), "-q", QUEUE, "-n", f"w{i}", "--",
            "--concurrency=1"])

    def _redis_ping(self, port: int) -> bool:
        import redis

        try:
            return bool(redis.Redis(host="127.0.0.1", port=port).ping())
        except redis.RedisError:
            return False

    @staticmethod
    def _wait(check, timeout_s: float, message: str) -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if check():
                return
            time.sleep(0.5)
        raise TimeoutError(message)

    def kill_worker(self, proc: subprocess.Popen) -> None:
        """SIGKILL a worker's whole process group (the CLI, celery and its pool children)."""
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    def stop(self) -> None:
        for proc in [*self.workers, self.daemon, self.redis]:
            if proc is None or proc.poll() is not None:
                continue
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for key, value in getattr(self, "_saved", {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self.pg.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def logs(self) -> str:
        out = []
        for log in sorted(self.base.glob("*.log")):
            out.append(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}")
        return "\n".join(out)

    def __enter__(self) -> "WorkerCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
