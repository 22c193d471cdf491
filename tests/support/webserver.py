"""Run ``dagster-webserver`` on a free local port for a test, and talk GraphQL to it.

``DagsterWebserver(project_dir)`` starts ``dagster-webserver -w workspace.yaml
-h 127.0.0.1 -p <free port>`` in ``project_dir`` with ``DAGSTER_HOME`` and
``EVAL_PIPELINES_HOME`` set to that folder, in its own process group (the
webserver starts the code location as a child gRPC process)::

    with DagsterWebserver(project) as web:
        web.serve(timeout_s=90)     # start on a free port, wait for the code location
        data = web.graphql("{ version }")

On exit the whole process group gets SIGTERM, then SIGKILL after a grace
period, so no server outlives the test. Only the group this class started is
signalled. The server's output goes to a log file that ``log_tail()`` returns
for failure messages.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.postgres import free_port


def webserver_executable() -> str:
    beside_python = Path(sys.executable).parent / "dagster-webserver"
    return str(beside_python) if beside_python.exists() else "dagster-webserver"


class DagsterWebserver:
    def __init__(self, project_dir: Path, workspace: str = "workspace.yaml",
                 extra_env: dict[str, str] | None = None) -> None:
        self.project_dir = Path(project_dir)
        self.workspace = workspace
        self.extra_env = extra_env or {}
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.project_dir / "webserver.log"
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "DagsterWebserver":
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("EVAL_PIPELINES_", "DAGSTER_"))}
        env |= {"DAGSTER_HOME": str(self.project_dir), "EVAL_PIPELINES_HOME": str(self.project_dir),
                "PYTHONUNBUFFERED": "1", **self.extra_env}
        self.port = free_port()
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [webserver_executable(), "-w", self.workspace, "-h", "127.0.0.1", "-p", str(self.port)],
            cwd=self.project_dir, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
            stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def _get(self, path: str, timeout: float = 5) -> bytes:
        with urllib.request.urlopen(self.base_url + path, timeout=timeout) as response:
            return response.read()

    def graphql(self, query: str, variables: dict[str, Any] | None = None, timeout: float = 30) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(self.base_url + "/graphql", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = json.loads(response.read())
        if payload.get("errors"):
            raise AssertionError(f"GraphQL errors: {payload['errors']}")
        return payload["data"]

    def wait_until_up(self, timeout_s: float = 90) -> dict:
        """Poll ``/server_info`` until it answers (bounded); returns its JSON."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                return json.loads(self._get("/server_info"))
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                time.sleep(0.5)
        raise TimeoutError(f"dagster-webserver did not answer /server_info in {timeout_s:.0f} s\n"
                           f"{self.log_tail()}")

    def wait_until_loaded(self, timeout_s: float = 90) -> dict:
        """Wait for the server, then for its code location; returns the first repository node."""
        deadline = time.monotonic() + timeout_s
        self.wait_until_up(timeout_s)
        last: Any = None
        while time.monotonic() < deadline:
            self._check_alive()
            last = self.graphql(REPOSITORIES)["repositoriesOrError"]
            if last.get("__typename") == "RepositoryConnection" and last["nodes"]:
                return last["nodes"][0]
            time.sleep(0.5)
        raise TimeoutError(f"the code location did not load in {timeout_s:.0f} s: {last}\n{self.log_tail()}")

    def serve(self, timeout_s: float = 90, attempts: int = 3) -> dict:
        """Start and wait for the code location; on a lost race for the free port
        (the server exits saying the address is in use) start again on another."""
        for attempt in range(attempts):
            self.start()
            try:
                return self.wait_until_loaded(timeout_s)
            except RuntimeError:
                in_use = "address already in use" in self.log_tail().lower()
                self.stop()
                if not in_use or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def _check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"dagster-webserver exited with {self.proc.returncode}\n{self.log_tail()}")

    def stop(self, grace_s: float = 15) -> None:
        proc, self.proc = self.proc, None
        try:
            if proc is not None:
                pgid = proc.pid  # start_new_session: the group id is the leader's pid
                for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10)):
                    try:
                        os.killpg(pgid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        proc.wait(timeout=wait)
                    except subprocess.TimeoutExpired:
                        continue
                    # The leader is gone; make sure no child (the code server) stays.
                    try:
                        os.killpg(pgid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    break
        finally:
            if self._log is not None:
                self._log.close()
                self._log = None

    def __enter__(self) -> "DagsterWebserver":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


REPOSITORIES = """
{
  repositoriesOrError {
    __typename
    ... on RepositoryConnection { nodes { name location { name } } }
    ... on PythonError { message }
  }
}
"""
