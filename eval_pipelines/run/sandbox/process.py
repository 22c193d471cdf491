"""Supervising one sandboxed process until nothing of it is left.

``communicate`` feeds stdin, collects stdout/stderr up to a byte cap, enforces
the wall-clock deadline, and then kills whatever the program left behind:
its process group, every process of the run's own uid (when it has one),
plus any process that still carries the run's private ``HOME`` in its
environment or sits in the run's directory (a best-effort sweep of ``/proc``
for children that called ``setsid`` to leave the group).

Used by ``eval_pipelines.run.sandbox.runner``, which starts the process.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

from eval_pipelines.run.sandbox.namespaces import kill_uid

_KILL_GRACE_S = 1.0  # how long to drain pipes after everything was killed


def communicate(
    proc: subprocess.Popen[bytes],
    stdin: bytes,
    timeout_s: float,
    max_output_bytes: int,
    workdir: Path,
    uid: int | None = None,
) -> tuple[bytes, bytes, bool, bool]:
    """Feed stdin, collect output, enforce the deadline, and kill what is left.

    Output is read until the pipes close, but a background child that keeps
    them open cannot hold the caller: once the main process has exited (or
    the deadline passed) everything is killed and the pipes are drained for
    at most a second.
    """
    assert proc.stdin and proc.stdout and proc.stderr
    deadline = time.monotonic() + timeout_s
    stdout_fd, stderr_fd, stdin_fd = proc.stdout.fileno(), proc.stderr.fileno(), proc.stdin.fileno()
    out = {stdout_fd: bytearray(), stderr_fd: bytearray()}
    truncated = False
    timed_out = False
    cleaned = False
    drain_until = 0.0
    pending = memoryview(stdin)

    sel = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr):
        os.set_blocking(stream.fileno(), False)
        sel.register(stream.fileno(), selectors.EVENT_READ)
    if pending:
        os.set_blocking(proc.stdin.fileno(), False)
        sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    try:
        while any(key.events & selectors.EVENT_READ for key in sel.get_map().values()):
            now = time.monotonic()
            if not cleaned and (proc.poll() is not None or now >= deadline):
                if proc.returncode is None:
                    timed_out = True
                kill_all(proc, workdir, uid)
                cleaned = True
                drain_until = time.monotonic() + _KILL_GRACE_S
            if cleaned and now >= drain_until:
                break  # something outside our reach still holds the pipes
            wait = (drain_until - now) if cleaned else min(0.05, max(0.0, deadline - now))
            for key, _ in sel.select(max(0.0, wait)):
                fd = key.fd
                if fd == stdin_fd:
                    try:
                        written = os.write(fd, pending[:65536])
                        pending = pending[written:]
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, OSError):
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(fd)
                        proc.stdin.close()
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(fd)
                    continue
                room = max_output_bytes - len(out[fd])
                if len(chunk) > room:
                    truncated = True
                out[fd] += chunk[:max(0, room)]
    finally:
        sel.close()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
    if not cleaned:
        if proc.poll() is None and time.monotonic() >= deadline:
            timed_out = True
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
        kill_all(proc, workdir, uid)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
        pass
    return bytes(out[stdout_fd]), bytes(out[stderr_fd]), timed_out, truncated


def kill_all(proc: subprocess.Popen[bytes], workdir: Path, uid: int | None = None) -> None:
    """SIGKILL the program's process group, every process of its own uid, and any tied to its directory.

    With a uid of its own (and in a PID namespace, whose processes all die with
    its first one) nothing escapes; the directory sweep is the best effort of
    the levels that run as the caller's user.
    """
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # start_new_session: pgid == pid
    except (ProcessLookupError, PermissionError):
        pass
    if uid is not None:
        kill_uid(uid)
    for _ in range(3):  # a forking program may race the sweep; repeat a few times
        if not _sweep(workdir, proc.pid):
            break


def _is_zombie(proc_dir: str) -> bool:
    try:
        stat_line = Path(proc_dir, "stat").read_text()
    except OSError:
        return True  # gone
    return stat_line.rsplit(")", 1)[-1].split()[0] in ("Z", "X")


def _sweep(workdir: Path, main_pid: int) -> int:
    """Kill processes carrying this run's private HOME or living in its directory."""
    marker = f"\0HOME={workdir}\0".encode()
    prefix = str(workdir)
    me = os.getpid()
    killed = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me or _is_zombie(entry.path):
            continue
        hit = False
        try:
            environ = b"\0" + Path(entry.path, "environ").read_bytes()
            hit = marker in environ
        except OSError:
            pass
        if not hit:
            try:
                cwd = os.readlink(os.path.join(entry.path, "cwd"))
                hit = cwd == prefix or cwd.startswith(prefix + "/")
            except OSError:
                pass
        if hit:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += pid != main_pid
            except (ProcessLookupError, PermissionError):
                pass
    return killed
