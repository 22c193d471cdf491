"""eval_pipelines.run.sandbox.runner: timeouts, memory, leftover children, environment, files.

These run real processes at the level the sandbox picks here (``namespaces``
as root, bubblewrap otherwise when it starts) and hold under any level.
Process checks therefore look for a unique token in ``/proc/*/cmdline`` (pids
printed inside a PID namespace are not host pids), and additionally check the
printed pid when the plain isolation ran. The attacks of issue 19 at every
level are in tests/run/test_sandbox_levels.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import sys
import time
import uuid
from pathlib import Path

import pytest

from eval_pipelines.run.sandbox.runner import (
    BUBBLEWRAP, DROPPED_UID, ENV_ALLOW, NAMESPACES, STRONG_LEVELS, SUBPROCESS, arun_sandboxed, run_sandboxed,
)

ALLOWED_ENV = {"PATH", "LANG", "HOME", "TMPDIR"}


# The dropped-uid level cannot run an interpreter installed in a folder only root may enter.
PLAIN_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python"


def py(code: str, *args: str, stdin: bytes = b"", timeout_s: float = 10, executable: str = "python", **kw):
    return run_sandboxed([executable, "-c", code, *args], stdin=stdin, timeout_s=timeout_s, **kw)


def token() -> str:
    """A unique number usable as `sleep` argument and findable in /proc cmdlines."""
    return f"61.{uuid.uuid4().int % 10**12:012d}"


def proc_state(pid: int) -> str | None:
    """The process state letter, or None when no such process exists."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[0]


def running_with(tok: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``tok``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if tok.encode() in cmdline and proc_state(int(entry.name)) not in (None, "Z", "X"):
            found.append(int(entry.name))
    return found


def assert_dead(pid: int) -> None:
    """Gone, or at most an unreaped zombie (dead, waiting for init to reap it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    assert proc_state(pid) in (None, "Z", "X"), f"process {pid} survived the sandbox"


def test_runs_python_with_stdin_and_captures_output() -> None:
    result = py("import sys; data = sys.stdin.read(); print(data.upper()); "
                "print('warn', file=sys.stderr)", stdin=b"hello")
    assert result.ok, result
    assert result.stdout == b"HELLO\n"
    assert result.stderr == b"warn\n"
    assert result.isolation.split(" (")[0] in (NAMESPACES, BUBBLEWRAP, DROPPED_UID, SUBPROCESS)
    assert not result.timed_out and not result.killed
    assert result.duration_ms > 0


def test_infinite_loop_is_killed_at_the_timeout_with_its_process_group() -> None:
    tok = token()
    started = time.monotonic()
    result = py("import os, sys; print(os.getpid(), os.getpgid(0), flush=True)\nwhile True: pass",
                tok, timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.killed
    assert result.returncode is not None and result.returncode != 0
    assert 0.9 <= elapsed < 30, elapsed  # killed at the 1 s timeout, not left running
    assert running_with(tok) == []
    pid, pgid = map(int, result.stdout.split())
    if result.isolation.startswith(SUBPROCESS):
        assert pgid == pid  # its own process group ...
        with pytest.raises(ProcessLookupError):  # ... and nothing is left in it
            os.killpg(pgid, 0)


def test_memory_hog_fails_without_hurting_the_caller() -> None:
    before = resource.getrlimit(resource.RLIMIT_AS)
    result = py("b = b'x' * 4_000_000_000\nprint('allocated', len(b))", memory_mb=256)
    assert result.returncode != 0
    assert b"allocated" not in result.stdout
    assert b"MemoryError" in result.stderr or result.killed
    # The limit applied to the child only: this process can still allocate freely.
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert len(bytearray(300 * 1024 * 1024)) == 300 * 1024 * 1024


CHILD_SPAWNERS = {
    "popen": "import subprocess, sys; p = subprocess.Popen(['sleep', sys.argv[1]]); print(p.pid)",
    "popen_new_session": (
        "import subprocess, sys; p = subprocess.Popen(['sleep', sys.argv[1]], "
        "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"
    ),
    "fork": (
        "import os, sys, time\npid = os.fork()\n"
        "if pid == 0:\n    time.sleep(60)\n    os._exit(0)\nprint(pid)"
    ),
}


@pytest.mark.parametrize("how", sorted(CHILD_SPAWNERS))
def test_no_child_survives_the_run(how: str) -> None:
    tok = token()
    result = py(CHILD_SPAWNERS[how], tok, timeout_s=45)
    assert result.returncode == 0, result.stderr
    assert not result.timed_out
    # The sleeper kept stdout open (popen, fork) but did not hold the run up: it did not
    # reach its timeout (asserted above; the clock is not, a loaded machine would break it).
    child = int(result.stdout.split()[-1])
    assert running_with(tok) == []
    if result.isolation.startswith(SUBPROCESS):
        assert_dead(child)


def test_environment_holds_no_parent_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-LEAK-123")
    monkeypatch.setenv("SOME_PARENT_SETTING", "parent-value")
    result = py("import json, os; print(json.dumps(dict(os.environ)))")
    assert result.ok, result
    env = json.loads(result.stdout)
    extra = {"PWD"} if result.isolation == BUBBLEWRAP else set()  # bwrap always sets PWD
    assert set(env) <= ALLOWED_ENV | extra, env
    assert b"sk-test-LEAK-123" not in result.stdout
    assert b"parent-value" not in result.stdout
    assert env["HOME"] == env["TMPDIR"]


def test_cwd_is_a_fresh_empty_directory_removed_afterwards() -> None:
    code = "import json, os; print(json.dumps([os.getcwd(), sorted(os.listdir('.')), os.environ['HOME']]))"
    first = py(code)
    cwd, listing, home = json.loads(first.stdout)
    assert listing == []
    assert home == cwd
    assert cwd != os.getcwd()
    assert not Path(cwd).exists()

    second = py(code, files={"given.txt": b"hi", "sub/data.json": b"{}"})
    cwd2, listing2, _ = json.loads(second.stdout)
    assert cwd2 != cwd
    assert listing2 == ["given.txt", "sub"]
    assert not Path(cwd2).exists()


def test_files_must_stay_inside_the_sandbox() -> None:
    result = py("print(1)", files={"../escape.txt": b"x"})
    assert result.error and "relative path inside the sandbox" in result.error


def test_relative_writes_do_not_land_in_the_callers_cwd(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = py("open('note.txt', 'w').write('hi'); import os; print(os.path.abspath('note.txt'))")
    assert result.ok, result
    assert not (tmp_path / "note.txt").exists()
    assert not Path(result.stdout.decode().strip()).exists()  # removed with the sandbox dir


def test_the_default_level_blocks_writes_outside_the_sandbox(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW, raising=False)
    target = tmp_path / "outside.txt"
    result = py(f"open({str(target)!r}, 'w').write('escaped')")
    if result.isolation not in STRONG_LEVELS:
        assert result.error and "untrusted code refused" in result.error  # refused, not run
        return
    assert result.returncode != 0
    assert not target.exists()


def test_file_size_limit_is_enforced() -> None:
    result = py("open('big.bin', 'wb').write(b'x' * 20_000_000)")
    assert result.returncode != 0
    assert b"File too large" in result.stderr or result.killed


def test_output_is_capped() -> None:
    result = py("import sys; sys.stdout.write('y' * 3_000_000)", max_output_bytes=1000)
    assert result.ok
    assert len(result.stdout) == 1000
    assert result.output_truncated


def test_missing_program_is_an_error_result_not_an_exception() -> None:
    result = run_sandboxed(["no-such-program-7f3a"], stdin=b"", timeout_s=5)
    assert result.error and "not found" in result.error
    assert result.returncode == 127
    assert not result.ok


def test_cpu_limit_stops_a_busy_loop_before_the_wall_clock_timeout() -> None:
    result = py("while True: pass", timeout_s=60, cpu_s=1)
    assert not result.timed_out  # the CPU limit ended it, not the wall clock
    assert result.returncode != 0


def test_async_wrapper() -> None:
    async def main():
        return await asyncio.gather(*(arun_sandboxed(["python", "-c", f"print({i} * 2)"],
                                                     stdin=b"", timeout_s=10) for i in range(3)))

    results = asyncio.run(main())
    assert [r.stdout for r in results] == [b"0\n", b"2\n", b"4\n"]


def test_bubblewrap_that_cannot_start_falls_back_and_says_why(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("EVAL_PIPELINES_BWRAP", str(fake))
    monkeypatch.setenv("EVAL_PIPELINES_SANDBOX", "bubblewrap")
    monkeypatch.delenv(ENV_ALLOW, raising=False)
    refused = py("print('still ran')")
    assert refused.error and "untrusted code refused" in refused.error and "--allow-unsandboxed-code" in refused.error
    assert "bubblewrap failed to start" in refused.isolation and "No permissions" in refused.isolation
    monkeypatch.setenv(ENV_ALLOW, "1")
    result = py("print('still ran')", executable=PLAIN_PYTHON)
    assert result.ok, result
    assert result.stdout == b"still ran\n"
    assert result.isolation.split(" (")[0] in (DROPPED_UID, SUBPROCESS)
    assert "(bubblewrap failed to start" in result.isolation and "No permissions" in result.isolation


def test_the_plain_level_is_refused_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_PIPELINES_SANDBOX", "subprocess")
    monkeypatch.delenv(ENV_ALLOW, raising=False)
    refused = py("print(1)")
    assert refused.returncode == 127 and not refused.ok and refused.stdout == b""
    assert refused.error.startswith("untrusted code refused: the strongest sandbox available here is "
                                    "subprocess+rlimits")
    monkeypatch.setenv(ENV_ALLOW, "1")
    assert py("print(1)").isolation == SUBPROCESS


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_starts_under_the_memory_limit_and_is_bounded() -> None:
    ok = run_sandboxed(["node", "-e", "console.log(process.version)"], stdin=b"", timeout_s=10,
                       memory_mb=256)
    assert ok.ok, ok.stderr_tail()
    assert ok.stdout.startswith(b"v")
    hog = run_sandboxed(["node", "-e", "const a = []; while (true) a.push(new Array(1e6).fill(1.5));"],
                        stdin=b"", timeout_s=20, memory_mb=256)
    assert hog.returncode != 0 and not hog.timed_out


def test_python_means_the_running_interpreter() -> None:
    result = py("import sys; print(sys.version_info[:2])")
    assert result.stdout.decode().strip() == str(sys.version_info[:2])
