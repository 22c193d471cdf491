"""Hostile code in the sandbox (issue #9), under both isolation levels.

One hostile script tries, in turn: writing outside its working directory,
reading a private key in a ``.ssh`` folder, reading the results DuckDB file,
opening a network connection (to a listener this test runs), and exhausting
file descriptors. It runs under bubblewrap (installed here) and under the
plain ``subprocess+rlimits`` fallback (forced with ``EVAL_PIPELINES_SANDBOX=subprocess``,
which also needs the explicit opt-in), and at the level picked without bubblewrap
(``namespaces`` as root; issue 19).

The assertions state what docs/security.md says each level prevents -- and,
for the fallback, what it does not: it runs as the caller's user (root in this
CI), so reads, writes elsewhere and the network are open to it. The grader
issue's hostile scripts (infinite loop, memory hog, fork/orphan children,
environment secrets, file size, output flood, CPU) are in tests/run/test_sandbox.py and
tests/grading/test_executed.py.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.run.sandbox.runner import BUBBLEWRAP, ENV_ALLOW, NAMESPACES, SUBPROCESS, OPEN_FILES_LIMIT, run_sandboxed
from eval_pipelines.suite.models import Assertion, Message, TestCase
from eval_pipelines.store.connection import connect

pytestmark = pytest.mark.timeout(120)

HOSTILE = r'''
import json, os, socket, sys
target, ssh_key, db_file, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
real_home = sys.argv[5] if len(sys.argv) > 5 else "/root"
report = {}
def attempt(name, action):
    try:
        report[name] = ["ok", action()]
    except BaseException as exc:
        report[name] = ["refused", f"{type(exc).__name__}: {exc}"[:200]]
def write_outside():
    with open(target, "w") as f:
        f.write("escaped")
    return target
attempt("write_outside", write_outside)
attempt("read_ssh_key", lambda: open(ssh_key).read()[:40])
attempt("read_duckdb", lambda: len(open(db_file, "rb").read()))
attempt("list_real_home_ssh", lambda: len(os.listdir(os.path.join(real_home, ".ssh"))))
def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(b"hello")
    s.close()
    return "connected"
attempt("network", connect)
def exhaust():
    held = []
    try:
        while len(held) < 100000:
            held.append(open("/dev/null"))
    except OSError as exc:
        return [len(held), type(exc).__name__ + ": " + str(exc)[:80]]
    return [len(held), "no limit"]
attempt("file_descriptors", exhaust)
print(json.dumps(report))
'''


@pytest.fixture
def listener() -> Iterator[tuple[int, list[Any]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen: list[Any] = []
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


def plant(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- fake\n")
    key.chmod(0o600)
    db = tmp_path / "results.duckdb"
    with connect(db):
        pass
    return tmp_path / "outside.txt", key, db


def run_hostile(tmp_path: Path, port: int) -> tuple[dict[str, Any], Any]:
    target, key, db = plant(tmp_path)
    started = time.perf_counter()
    result = run_sandboxed(["python", "-c", HOSTILE, str(target), str(key), str(db), str(port), str(Path.home())],
                           stdin=b"", timeout_s=30)
    assert result.returncode == 0, result.stderr_tail()
    report = json.loads(result.stdout)
    report["_seconds"] = round(time.perf_counter() - started, 2)
    report["_written"] = target.exists()
    return report, result


def test_bubblewrap_stops_every_hostile_action(tmp_path: Path, listener: tuple[int, list[Any]],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    monkeypatch.delenv("EVAL_PIPELINES_BWRAP", raising=False)
    monkeypatch.setenv("EVAL_PIPELINES_SANDBOX", "bubblewrap")  # as root the default is namespaces
    report, result = run_hostile(tmp_path, listener[0])
    assert result.isolation == BUBBLEWRAP, result.isolation
    assert report["write_outside"][0] == "refused" and not report["_written"]
    assert report["read_ssh_key"][0] == "refused"  # the caller's files are not mounted
    assert report["read_duckdb"][0] == "refused"
    assert report["list_real_home_ssh"][0] == "refused"  # the real ~/.ssh is not there at all
    assert report["network"][0] == "refused" and listener[1] == []  # no network namespace route
    count, error = report["file_descriptors"][1]
    assert count <= OPEN_FILES_LIMIT and "Too many open files" in error
    print(f"\nFIGURES sandbox bubblewrap: {json.dumps(report)}")


def test_without_bubblewrap_the_default_level_stops_every_hostile_action(
        tmp_path: Path, listener: tuple[int, list[Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_PIPELINES_BWRAP", "off")
    monkeypatch.delenv("EVAL_PIPELINES_SANDBOX", raising=False)
    monkeypatch.delenv(ENV_ALLOW, raising=False)
    target, key, db = plant(tmp_path)
    result = run_sandboxed(["python", "-c", HOSTILE, str(target), str(key), str(db), str(listener[0]),
                            str(Path.home())], stdin=b"", timeout_s=30)
    if result.isolation != NAMESPACES:  # no namespaces here: refused, never run half-protected
        assert result.error and result.error.startswith("untrusted code refused") and result.stdout == b""
        assert not target.exists()
        return
    assert result.returncode == 0, result.stderr_tail()
    report = json.loads(result.stdout)
    assert report["write_outside"][0] == "refused" and not target.exists()
    assert report["read_ssh_key"][0] == "refused"
    assert report["read_duckdb"][0] == "refused"
    assert report["list_real_home_ssh"][0] == "refused"
    assert report["network"][0] == "refused" and listener[1] == []
    count, error = report["file_descriptors"][1]
    assert count <= OPEN_FILES_LIMIT and "Too many open files" in error
    print(f"\nFIGURES sandbox namespaces: {json.dumps(report)}")


def test_plain_rlimits_fallback_bounds_resources_but_not_access(tmp_path: Path, listener: tuple[int, list[Any]],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_PIPELINES_SANDBOX", "subprocess")
    monkeypatch.setenv(ENV_ALLOW, "1")  # the plain level is refused without it
    report, result = run_hostile(tmp_path, listener[0])
    assert result.isolation == SUBPROCESS
    # What the fallback bounds: descriptors (and, in tests/run/test_sandbox.py, time, memory, CPU, file size, output).
    count, error = report["file_descriptors"][1]
    assert count <= OPEN_FILES_LIMIT and "Too many open files" in error
    # What it does not prevent (docs/security.md says so): the program is the caller's user.
    assert report["write_outside"][0] == "ok" and report["_written"]
    assert report["read_ssh_key"][0] == "ok" and "PRIVATE KEY" in report["read_ssh_key"][1]
    assert report["read_duckdb"][0] == "ok"
    assert report["network"] == ["ok", "connected"]
    deadline = time.monotonic() + 2
    while not listener[1] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert listener[1] == [b"hello"]
    print(f"\nFIGURES sandbox subprocess+rlimits: {json.dumps(report)}")


def test_a_hostile_code_judge_gets_an_error_grade_and_reaches_nothing(tmp_path: Path,
                                                                      listener: tuple[int, list[Any]],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The same probes from a suite's code judge, through the grader, at the default level."""
    monkeypatch.delenv("EVAL_PIPELINES_BWRAP", raising=False)
    monkeypatch.delenv("EVAL_PIPELINES_SANDBOX", raising=False)
    monkeypatch.delenv(ENV_ALLOW, raising=False)
    target, key, db = plant(tmp_path)
    judge = tmp_path / "suite" / "judge.py"
    judge.parent.mkdir()
    body = HOSTILE.replace("target, ssh_key, db_file, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])",
                           f"target, ssh_key, db_file, port = {str(target)!r}, {str(key)!r}, {str(db)!r}, "
                           f"{listener[0]}\nsys.stdin.read()")
    body = body.replace("print(json.dumps(report))",
                        "print(json.dumps({'score': 0.0 if any(v[0] == 'ok' for k, v in report.items() "
                        "if k not in ('file_descriptors', 'list_real_home_ssh')) else 1.0, 'details': report}))")
    judge.write_text(body)
    case = TestCase(id="t", input=[Message(content="q")])
    grade = grade_output(Assertion(type="code_judge", config={"script": "judge.py"}),
                         GradeInput(case=case, output="anything", suite_dir=judge.parent))
    if grade.details.get("isolation", "").split(" (")[0] not in (NAMESPACES, BUBBLEWRAP):
        assert grade.status == "error" and "untrusted code refused" in grade.reason
        return
    assert grade.status == "graded", grade.reason
    assert grade.score == 1.0, grade.details  # every probe was refused
    assert not target.exists() and listener[1] == []
