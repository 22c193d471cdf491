"""A run launcher that starts each run as a fork of a warm process (``run_host.py``).

Set in ``dagster.yaml``::

    run_launcher:
      module: eval_pipelines.defs.warm_launcher
      class: WarmRunLauncher

Everything else is Dagster's default: one run, one process, one partition; the
same events, run monitoring and cancellation. What changes is what a run costs
before its first stage: the default launcher has the code server spawn a new
interpreter per run (imports of Dagster, the code location, openai, pandas,
DuckDB: ~3 s of CPU each), which dominated the nightly batch (one run per skill
version, docs/benchmarks-nightly.md); a fork of a host that imported them once
costs milliseconds.

The host is started on the first launch, one per (Python executable, working
directory) of the runs' code location, and replaced when it dies or the code on
disk changes. If it cannot start or answer, the run goes through the code server
as with ``DefaultRunLauncher`` (said as an engine event on the run): a launch
never fails because of the shortcut.

The worker's pid (with its start time, since pids are reused) is a run tag, so
``check_run_worker_health`` can tell run monitoring that a worker died (SIGKILL,
OOM) instead of waiting for the run timeout, and ``terminate`` interrupts the
worker as the code server would (SIGINT: Dagster's interrupt handling cancels).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import threading
from typing import Any

from dagster import _check as check
from dagster._core.launcher import CheckRunHealthResult, LaunchRunContext, WorkerStatus
from dagster._core.launcher.default_run_launcher import DefaultRunLauncher
from dagster._core.storage.dagster_run import DagsterRun
from dagster._serdes import serialize_value

from eval_pipelines.defs.run_host import process_stat

WORKER_TAG = "eval/run_worker"  # "<hostname>:<pid>:<start ticks>"
START_TIMEOUT_S = 300.0  # imports on a loaded 2-core machine; past it, the code server launches the run
ANSWER_TIMEOUT_S = 120.0  # loading the code location on the first launch


class HostUnavailable(RuntimeError):
    """The warm host could not take the run (said on the run; the code server launches it)."""


class _Host:
    """One ``run_host`` process and its answer pipe."""

    def __init__(self, executable: str, cwd: str | None) -> None:
        self.process = subprocess.Popen(
            [executable, "-m", "eval_pipelines.defs.run_host"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd=cwd or None, text=True, bufsize=1, start_new_session=True)
        ready = self._answer(START_TIMEOUT_S)
        if "ready" not in ready:
            self.close()
            raise HostUnavailable(ready.get("error", f"unexpected answer {ready}"))

    def _answer(self, timeout_s: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout_s):
                self.close()
                raise HostUnavailable(f"the run host did not answer within {timeout_s:.0f} s")
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait(timeout=10)
            raise HostUnavailable(f"the run host exited (code {code})")
        return json.loads(line)

    def alive(self) -> bool:
        return self.process.poll() is None

    def start(self, request: dict[str, str]) -> dict[str, Any]:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except OSError as exc:
            raise HostUnavailable(f"the run host is gone ({exc})") from None
        return self._answer(ANSWER_TIMEOUT_S)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()  # EOF: the host exits; its workers run on
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class WarmRunLauncher(DefaultRunLauncher):
    """``DefaultRunLauncher`` with run workers forked from a warm host (see the module docstring)."""

    def __init__(self, inst_data: Any = None) -> None:
        super().__init__(inst_data=inst_data)
        self._hosts: dict[tuple[str, str | None], _Host] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> "WarmRunLauncher":
        return cls(inst_data=inst_data)

    # ---- launching ----------------------------------------------------------------

    def launch_run(self, context: LaunchRunContext) -> None:
        run = check.inst(context.dagster_run, DagsterRun)
        try:
            answer = self._start_in_host(run)
        except HostUnavailable as exc:
            self._instance.report_engine_event(
                f"Warm run host unavailable ({exc}); launching through the code server.", run, cls=self.__class__)
            super().launch_run(context)
            return
        self._instance.add_run_tags(run.run_id, {WORKER_TAG: f"{socket.gethostname()}:{answer['pid']}:"
                                                             f"{answer.get('started') or ''}"})
        self._instance.report_engine_event(
            f"Run worker forked from the warm run host (pid {answer['pid']}).", run, cls=self.__class__)
        self._run_ids.add(run.run_id)

    def _start_in_host(self, run: DagsterRun) -> dict[str, Any]:
        origin = run.job_code_origin
        if origin is None:
            raise HostUnavailable("the run has no code origin")
        pointer = origin.repository_origin.code_pointer
        key = (origin.repository_origin.executable_path, getattr(pointer, "working_directory", None))
        request = {"run_id": run.run_id, "instance_ref": serialize_value(self._instance.get_ref()),
                   "job_origin": serialize_value(origin)}
        with self._lock:
            for _attempt in range(2):  # a stale or dead host is replaced once
                host = self._hosts.get(key)
                if host is None or not host.alive():
                    host = self._hosts[key] = _Host(*key)
                try:
                    answer = host.start(request)
                except HostUnavailable:
                    self._hosts.pop(key, None)
                    raise
                if "stale" in answer:
                    self._hosts.pop(key).close()
                    continue
                if "error" in answer:
                    raise HostUnavailable(answer["error"])
                return answer
        raise HostUnavailable("the run host kept reporting stale code")

    # ---- the worker's health and cancellation ---------------------------------------

    @staticmethod
    def _worker(run: DagsterRun) -> tuple[str, int, str] | None:
        tag = run.tags.get(WORKER_TAG)
        if not tag:
            return None
        hostname, pid, started = tag.rsplit(":", 2)
        return hostname, int(pid), started

    @staticmethod
    def _alive(pid: int, started: str) -> bool:
        stat = process_stat(pid)
        if stat is None or (started and stat[1] != started):
            return False  # gone, or the pid now names another process
        return stat[0] != "Z"

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        worker = self._worker(run)
        # A status other than RUNNING makes run monitoring fail the run; where we cannot look
        # (launched through the code server, or from another machine) the run timeouts decide,
        # as with DefaultRunLauncher.
        if worker is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING, "not launched from the warm run host: not checked")
        hostname, pid, started = worker
        if hostname != socket.gethostname():
            return CheckRunHealthResult(WorkerStatus.RUNNING, f"the worker runs on {hostname}: not checked")
        if self._alive(pid, started):
            return CheckRunHealthResult(WorkerStatus.RUNNING, run_worker_id=str(pid))
        return CheckRunHealthResult(WorkerStatus.FAILED, f"run worker process {pid} is gone", run_worker_id=str(pid))

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id) if self.has_instance else None
        if run is None or run.is_finished:
            return False
        worker = self._worker(run)
        if worker is None:
            return super().terminate(run_id)
        hostname, pid, started = worker
        self._instance.report_run_canceling(run)
        if hostname != socket.gethostname() or not self._alive(pid, started):
            self._instance.report_engine_event(f"Run worker {pid} is not running here; nothing to interrupt.", run,
                                               cls=self.__class__)
            return False
        os.kill(pid, signal.SIGINT)  # Dagster's interrupt handling ends the run as canceled
        return True

    def dispose(self) -> None:
        with self._lock:
            for host in self._hosts.values():
                host.close()
            self._hosts.clear()
