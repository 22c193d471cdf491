"""The attacks of issue 19 at every isolation level this machine can run.

Each hostile program (tests/support/hostile.py) runs at each level, forced
with ``EVAL_PIPELINES_SANDBOX`` (the weak levels also need the explicit
opt-in). A level that cannot start here skips with the reason; the default
level as root without bubblewrap -- ``namespaces`` -- runs wherever the kernel
allows unprivileged-or-root namespaces, which CI and this machine do.

The assertions are the table in docs/security.md: what each level prevents,
and -- for the weak levels, which are refused by default -- what it does not.
Everything is bounded: the fork bomb stops at 500 attempts, every program has
a short timeout, written files are under tmp dirs or removed afterwards, and
survivors are killed at the end of each test whatever happened.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from eval_pipelines.run.sandbox.runner import (
    BUBBLEWRAP, DROPPED_UID, ENV_ALLOW, NAMESPACES, PROCESS_CAP, SUBPROCESS, run_sandboxed,
)
from eval_pipelines.run.sandbox.isolation import choose_isolation
from tests.support.hostile import ESCAPE, FORK_BOMB, READ_ENVIRON, WRITE_AND_CONNECT, survivors, survivors_after

pytestmark = pytest.mark.timeout(180)
ROOT = os.geteuid() == 0
CANARY = "sk-FAKE-issue19-canary-5c0ffee"
LEVELS = [NAMESPACES, BUBBLEWRAP, DROPPED_UID, SUBPROCESS]
# The dropped-uid level cannot run an interpreter installed in a folder only root may enter.
PLAIN_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=LEVELS)
def level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    wanted = request.param
    monkeypatch.setenv("EVAL_PIPELINES_SANDBOX", wanted)
    monkeypatch.setenv(ENV_ALLOW, "1")
    got = choose_isolation()
    if got.level != wanted:
        pytest.skip(f"{wanted} does not run here: {got.why_not_stronger or got.level}")
    return wanted


@pytest.fixture
def marker() -> Iterator[str]:
    mark = f"66.{uuid.uuid4().int % 10**12:012d}"  # a valid `sleep` argument, unique in /proc
    yield mark
    for pid in survivors(mark):  # never leave the test's processes behind
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def python_for(level: str) -> str:
    return PLAIN_PYTHON if level == DROPPED_UID else "python"


def hostile(level: str, source: str, args: dict[str, Any], **kw: Any) -> tuple[dict[str, Any], Any]:
    result = run_sandboxed([python_for(level), "-c", source, json.dumps(args)], stdin=b"", timeout_s=30, **kw)
    assert result.error is None and result.returncode == 0, (result.isolation, result.stderr_tail())
    assert result.isolation == level
    return json.loads(result.stdout_text().strip().splitlines()[-1]), result


def test_the_key_in_the_pipelines_start_up_environment_is_out_of_reach(level: str) -> None:
    """The pipeline process starts with the key; the sandboxed program hunts for it in /proc."""
    program = (f"import json, sys\nfrom eval_pipelines.run.sandbox.runner import run_sandboxed\n"
               f"r = run_sandboxed([{python_for(level)!r}, '-c', sys.argv[1]], stdin=b'', timeout_s=30)\n"
               f"print(json.dumps([r.isolation, r.returncode, r.error, r.stdout_text()]))\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "OPENAI_API_KEY": CANARY,
           "EVAL_PIPELINES_SANDBOX": level, ENV_ALLOW: "1"}
    done = subprocess.run([sys.executable, "-c", program, READ_ENVIRON], env=env, capture_output=True,
                          timeout=120, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    isolation, returncode, error, stdout = json.loads(done.stdout.strip().splitlines()[-1])
    assert isolation == level and returncode == 0 and error is None, (isolation, error)
    report = json.loads(stdout.strip().splitlines()[-1])
    leaked = [item for item in report["found"] if CANARY in item]
    print(f"\nFIGURES sandbox {level} /proc environ: visible={report['visible']} readable={report['readable']} "
          f"key_found={len(leaked)}")
    if level in (NAMESPACES, BUBBLEWRAP):
        assert leaked == []
        assert report["visible"] <= 3  # its own PID namespace: the program (and at most a helper)
        assert report["ppid"] in (0, 1)  # its parent is outside the namespace (or is bwrap's init)
    elif level == DROPPED_UID:
        assert leaked == []  # another uid: the pipeline's environ is not readable
    elif ROOT:
        assert leaked, "as root the plain level reads the pipeline's key: that is why it is refused by default"


def test_a_child_that_leaves_session_directory_and_environment_dies_with_the_run(level: str,
                                                                                marker: str) -> None:
    report, _ = hostile(level, ESCAPE, {"marker": marker})
    assert report["child"] > 0
    left = survivors(marker) if level == SUBPROCESS else survivors_after(marker)
    print(f"\nFIGURES sandbox {level} setsid+chdir+exec escape: survivors={len(left)}")
    if level == SUBPROCESS:
        # The plain level finds leftovers by HOME and directory only: this one got away.
        assert len(left) == 1
    else:
        assert left == []


def test_a_fork_bomb_is_held_to_the_process_cap(level: str, marker: str) -> None:
    if ROOT and level in (BUBBLEWRAP, SUBPROCESS):
        pytest.skip(f"{level} runs as root's uid here, which RLIMIT_NPROC does not bind "
                    "(docs/security.md); not run so the test cannot flood the machine")
    report, _ = hostile(level, FORK_BOMB, {"marker": marker})
    print(f"\nFIGURES sandbox {level} fork bomb: started={report['started']} of 500, "
          f"first error {report['first_error']}; survivors={len(survivors_after(marker))}")
    if ROOT:  # a uid of the run's own: the program plus its children stay within PROCESS_CAP
        assert report["started"] + 1 <= PROCESS_CAP
    else:  # the caller's uid: its current processes plus a small allowance
        assert report["started"] < 500
    assert report["failed"] == 500 - report["started"] and "BlockingIOError" in report["first_error"][0]
    assert survivors_after(marker) == []


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            seen.append(conn.recv(16))
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join(2)
    server.close()


@pytest.fixture
def outside(tmp_path: Path, marker: str) -> Iterator[list[str]]:
    paths = [str(tmp_path / "outside.txt"), f"/tmp/eval-sandbox-test-{marker}",
             f"/var/tmp/eval-sandbox-test-{marker}", f"/dev/shm/eval-sandbox-test-{marker}"]
    yield [p for p in paths if os.path.isdir(os.path.dirname(p))]
    for path in paths:
        Path(path).unlink(missing_ok=True)


def test_writes_outside_and_local_connections(level: str, outside: list[str],
                                              listener: tuple[int, list[bytes]]) -> None:
    report, _ = hostile(level, WRITE_AND_CONNECT, {"outside": outside, "port": listener[0]})
    appeared = [p for p in outside if os.path.exists(p)]
    print(f"\nFIGURES sandbox {level} writes: {len(appeared)} of {len(outside)} files outside appeared; "
          f"network: {report['network']}")
    if level in (NAMESPACES, BUBBLEWRAP):
        assert appeared == []  # a private /tmp and /dev/shm, everything else read-only
        assert report["network"] != "connected" and listener[1] == []
    elif level == DROPPED_UID:
        assert str(outside[0]) not in appeared  # a folder of the pipeline's user: not writable
        assert report["network"] == "connected"  # no network namespace at this level
    else:
        assert appeared == outside  # the pipeline's user can write them all


def test_network_is_an_explicit_opt_in(level: str, listener: tuple[int, list[bytes]]) -> None:
    if level not in (NAMESPACES, BUBBLEWRAP):
        pytest.skip(f"{level} has no network namespace; the network is always open there")
    report, _ = hostile(level, WRITE_AND_CONNECT, {"outside": [], "port": listener[0]}, network=True)
    assert report["network"] == "connected"


UNPRIVILEGED_DRIVER = r'''
import json, os, sys
from eval_pipelines.run.sandbox.runner import run_sandboxed
from tests.support.hostile import ESCAPE, FORK_BOMB, READ_ENVIRON
marker = os.environ["MARKER"]
out = {}
for name, source in (("environ", READ_ENVIRON), ("bomb", FORK_BOMB), ("escape", ESCAPE)):
    r = run_sandboxed(["python3", "-c", source, json.dumps({"marker": marker})], stdin=b"", timeout_s=30)
    out[name] = [r.isolation, r.error, r.stdout_text()]
print(json.dumps(out))
'''


@pytest.mark.skipif(not ROOT or not os.access("/usr/bin/python3", os.X_OK) or not os.path.exists("/usr/bin/setpriv"),
                    reason="needs root (to become an unprivileged user), /usr/bin/python3 and setpriv")
def test_the_namespaces_level_for_an_unprivileged_user(tmp_path: Path, marker: str) -> None:
    """Not root: the launcher enters a user namespace first (uid 0 inside, no capabilities)."""
    tmp_path.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "EVAL_PIPELINES_SANDBOX": NAMESPACES,
           "OPENAI_API_KEY": CANARY, "MARKER": marker, "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    done = subprocess.run(["/usr/bin/setpriv", "--reuid", "12345", "--regid", "12345", "--clear-groups",
                           "/usr/bin/python3", "-c", UNPRIVILEGED_DRIVER], env=env, capture_output=True,
                          text=True, timeout=150, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (isolation, error, _) in out.items():
        if isolation != NAMESPACES:
            pytest.skip(f"unprivileged user namespaces are not allowed here: {isolation}")
        assert error is None, (name, error)
    environ = json.loads(out["environ"][2])
    assert environ["visible"] == 1 and not any(CANARY in item for item in environ["found"])
    bomb = json.loads(out["bomb"][2])
    assert bomb["started"] < 500  # the user's processes + 64 (RLIMIT_NPROC binds a normal user)
    assert survivors_after(marker) == []
    print(f"\nFIGURES sandbox namespaces as uid 12345: visible={environ['visible']} key_found=0 "
          f"fork bomb started={bomb['started']} of 500, survivors=0")
