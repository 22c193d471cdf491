"""A warm process that forks one run worker per Dagster run (started by ``warm_launcher.py``).

Dagster's default launcher asks the code server to start every run in a new
interpreter (multiprocessing "spawn"): each run worker imports Dagster, the code
location, the openai client, pandas and DuckDB again, some 3 s of CPU before the
first stage, and a nightly batch is one run per skill version. This host pays
the imports once: it imports what a run worker needs, then answers each launch
request with ``os.fork()``. The child is an ordinary run worker (the body of
``dagster api execute_run``): it opens the instance from its reference, writes
every event to the event log, and exits; nothing of the host's state but the
imported modules is shared (the host never opens the instance, DuckDB or a
socket before forking, and refuses to fork once another thread exists).

Protocol, one JSON line each way on stdin/stdout:

    -> {"run_id": ..., "instance_ref": <serialized>, "job_origin": <serialized>}
    <- {"pid": 1234, "started": "<start time ticks>"}  or  {"error": "..."}  or  {"stale": "..."}

"stale": a Python file of the code changed since the host started; the host exits
and the launcher starts a new one (runs must execute the code on disk, as a
fresh worker would). EOF on stdin: the launcher is gone; the host exits, its
running workers carry on (as the code server's do).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

# What every run worker of this project imports; imported once here, shared by every fork.
WARM_MODULES = ("dagster", "dagster._cli.api", "eval_pipelines.pipeline.stages", "eval_pipelines.pipeline.checks",
                "eval_pipelines.run.targets.openai_compat", "eval_pipelines.run.engine")


def _python_files(roots: list[Path]) -> Iterator[Path]:
    for root in roots:
        if root.is_file():
            yield root
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
            yield from (Path(folder) / f for f in files if f.endswith(".py"))


def code_fingerprint(roots: list[Path]) -> tuple[int, int]:
    """(newest mtime in ns, number of files) over the code's Python files: a changed,
    added or removed module changes it. ~400 stats, a few ms per launch."""
    newest, count = 0, 0
    for path in _python_files(roots):
        try:
            newest = max(newest, path.stat().st_mtime_ns)
        except FileNotFoundError:
            continue
        count += 1
    return newest, count


def _package_root(module_name: str) -> Path | None:
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    return path.parent if path.name == "__init__.py" else path


def process_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in ticks) from /proc/<pid>/stat; the start time with the pid names
    one process (pids are reused). None when the process is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], fields[19]


def process_start_ticks(pid: int) -> str | None:
    stat = process_stat(pid)
    return stat[1] if stat else None


class RunHost:
    def __init__(self) -> None:
        import importlib

        for name in WARM_MODULES:
            importlib.import_module(name)
        self._definitions: dict[str, Any] = {}  # serialized job origin -> its loaded job
        self._roots = [root for root in (_package_root("eval_pipelines"),) if root]
        self._fingerprint = code_fingerprint(self._roots)

    def _warm(self, origin_text: str) -> Any:
        """Load the code location's job once (imports the module, builds the Definitions)."""
        if origin_text not in self._definitions:
            from dagster._core.origin import JobPythonOrigin
            from dagster._serdes import deserialize_value
            from dagster._utils.hosted_user_process import recon_job_from_origin

            origin = deserialize_value(origin_text, JobPythonOrigin)
            recon_job_from_origin(origin).get_definition()
            module = getattr(origin.repository_origin.code_pointer, "module", None)
            root = _package_root(module.split(".")[0]) if module else None
            python_file = getattr(origin.repository_origin.code_pointer, "python_file", None)
            for extra in (root, Path(python_file).resolve() if python_file else None):
                if extra and extra not in self._roots:
                    self._roots.append(extra)
            self._fingerprint = code_fingerprint(self._roots)
            self._definitions[origin_text] = origin
        return self._definitions[origin_text]

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if code_fingerprint(self._roots) != self._fingerprint:
            return {"stale": "the code changed since the run host started"}
        try:
            self._warm(request["job_origin"])
        except Exception as exc:  # the launcher falls back to the code server, which reports it fully
            return {"error": f"loading the code location failed: {type(exc).__name__}: {exc}"[:2000]}
        if threading.active_count() != 1:
            # fork() copies only the calling thread; a lock held by another one would stay held.
            return {"error": f"cannot fork safely: {threading.active_count()} threads in the run host"}
        pid = os.fork()
        if pid == 0:
            _run_worker(request)  # never returns
        return {"pid": pid, "started": process_start_ticks(pid)}


def _run_worker(request: dict[str, Any]) -> None:
    """The child: the body of ``dagster api execute_run``, then exit without the host's cleanups."""
    code = 1
    try:
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        os.setpgid(0, 0)  # its own group: cancelling the run signals the worker and what it started
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(2, 1)  # the host's stdout is its answer pipe; the worker's prints go to stderr
        from dagster._cli.api import _execute_run_command_body
        from dagster._core.instance import DagsterInstance
        from dagster._core.instance.ref import InstanceRef
        from dagster._serdes import deserialize_value
        from dagster._utils.interrupts import capture_interrupts

        with capture_interrupts():
            with DagsterInstance.from_ref(deserialize_value(request["instance_ref"], InstanceRef)) as instance:
                code = _execute_run_command_body(request["run_id"], instance, lambda event: None,
                                                 set_exit_code_on_failure=False)
    except BaseException:  # noqa: BLE001 - the run's failure is in its event log; say why here too
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _reap(_signum: int, _frame: Any) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C of the daemon's terminal is not a cancel
    signal.signal(signal.SIGCHLD, _reap)
    answers = sys.stdout
    try:
        host = RunHost()
    except Exception as exc:  # noqa: BLE001 - said to the launcher, which falls back
        answers.write(json.dumps({"error": f"the run host could not start: {type(exc).__name__}: {exc}"}) + "\n")
        answers.flush()
        return 1
    answers.write(json.dumps({"ready": os.getpid()}) + "\n")
    answers.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        answer = host.handle(json.loads(line))
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
        if "stale" in answer:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
