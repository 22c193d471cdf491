"""Run untrusted programs (code judges, model-written functions) in a sandbox.

Each run gets:

* a fresh, empty temporary working directory (``files`` are written into it
  first) that is deleted afterwards; it is also ``HOME`` and ``TMPDIR``;
* an environment holding only ``PATH``, ``LANG``, ``HOME`` and ``TMPDIR`` --
  never the caller's API keys or other secrets (under bubblewrap, which always
  sets it, also ``PWD``);
* its own session and process group, and ``resource`` limits set before
  ``exec`` (address space or data size, CPU seconds, processes, file size,
  open files, no core dumps);
* a wall-clock timeout after which the whole process group is killed with
  SIGKILL. Whatever the program left running when it exited is killed too:
  the process group, plus any process that still carries this run's private
  ``HOME`` in its environment or sits in its directory (a best-effort sweep
  that catches children which called ``setsid`` to leave the group).

When bubblewrap (``bwrap``) is installed the program additionally runs in new
user, PID, network, IPC and UTS namespaces as an unprivileged uid with no
capabilities, sees only read-only system directories, the Python install and
the run's directory (its only writable place), and cannot reach the network;
killing bwrap kills everything in the PID namespace. ``SandboxResult.isolation``
says which of the two actually ran. Set ``EVAL_PIPELINES_BWRAP`` to a path to
use that bwrap binary, or to ``off`` to skip bubblewrap.

Limits of the fallback (``subprocess+rlimits``): the program runs as the
caller's user and can read what the caller can read and write outside its
directory wherever the caller can; it has network access. Run the pipeline as
an unprivileged user, or install bubblewrap, for untrusted code. As root,
``RLIMIT_NPROC`` is not enforced by the kernel.

Plain Python, no Dagster; ``arun_sandboxed`` is the asyncio entry point.
"""

from __future__ import annotations

import asyncio
import functools
import os
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

BUBBLEWRAP = "bubblewrap"
SUBPROCESS = "subprocess+rlimits"

FILE_SIZE_LIMIT = 10 * 1024 * 1024  # RLIMIT_FSIZE: largest file the program may write
OPEN_FILES_LIMIT = 64  # RLIMIT_NOFILE
PROCESS_LIMIT = 64  # RLIMIT_NPROC headroom over the user's current process count
# JavaScript runtimes reserve many GB of *virtual* address space up front (V8's
# heap cage, code range and WebAssembly guard regions) while using little of it,
# so an RLIMIT_AS of a few hundred MB stops `node` before it runs a line. For
# them we cap RLIMIT_DATA instead: since Linux 4.7 it counts private writable
# mappings, i.e. memory the program actually asks to use, not reservations.
DATA_LIMITED_RUNTIMES = ("node", "nodejs", "bun", "deno")

_ENV_BWRAP = "EVAL_PIPELINES_BWRAP"
_SANDBOX_UID = 65534  # "nobody" inside bubblewrap's user namespace
_KILL_GRACE_S = 1.0  # how long to drain pipes after everything was killed


@dataclass(frozen=True)
class SandboxResult:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    killed: bool  # the program was killed (by us on timeout, or by a signal/limit)
    duration_ms: float
    isolation: str
    error: str | None = None  # the sandbox could not run the program at all
    output_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.returncode == 0

    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    def stderr_tail(self, chars: int = 500) -> str:
        return self.stderr.decode("utf-8", errors="replace")[-chars:].strip()


def run_sandboxed(
    argv: list[str],
    *,
    stdin: bytes,
    timeout_s: float,
    memory_mb: int = 512,
    cpu_s: int | None = None,
    files: dict[str, bytes] | None = None,
    max_output_bytes: int = 1_000_000,
) -> SandboxResult:
    """Run ``argv`` in a sandbox; never raises for anything the program does.

    ``python``/``python3`` as ``argv[0]`` means the running interpreter
    (``sys.executable``); other bare names are looked up on ``PATH``. A program
    that cannot be found or started gives a result with ``error`` set and
    return code 127.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    started = time.perf_counter()
    bwrap, isolation = _choose_isolation()
    env = {
        "PATH": os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG") or "C.UTF-8",
    }
    workdir = Path(tempfile.mkdtemp(prefix="eval-sandbox-")).resolve()
    try:
        env["HOME"] = env["TMPDIR"] = str(workdir)
        try:
            _write_files(workdir, files or {})
        except (OSError, ValueError) as exc:
            return _failed(isolation, started, f"cannot prepare sandbox files: {exc}")
        program = _resolve_program(argv[0], env["PATH"], workdir)
        if program is None:
            return _failed(isolation, started, f"program {argv[0]!r} not found"
                           + ("" if os.sep in argv[0] else " on PATH"))
        argv = [program, *argv[1:]]
        if bwrap is not None:
            argv = [bwrap, *_bwrap_args(workdir, program), "--", *argv]
        preexec = _limits(
            memory_mb=memory_mb,
            cpu_s=cpu_s if cpu_s is not None else int(timeout_s) + 1,
            data_only=Path(program).name.lower().startswith(DATA_LIMITED_RUNTIMES),
        )
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=env,
                start_new_session=True,  # own session and process group
                preexec_fn=preexec,
                close_fds=True,
            )
        except OSError as exc:
            return _failed(isolation, started, f"cannot start {program!r}: {exc.strerror or exc}")
        stdout, stderr, timed_out, truncated = _communicate(
            proc, stdin, timeout_s, max_output_bytes, workdir
        )
        returncode = proc.returncode
        killed = timed_out or (returncode is not None and returncode < 0)
        return SandboxResult(
            returncode=returncode,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            killed=killed,
            duration_ms=(time.perf_counter() - started) * 1000,
            isolation=isolation,
            output_truncated=truncated,
        )
    finally:
        _remove_tree(workdir)


async def arun_sandboxed(
    argv: list[str],
    *,
    stdin: bytes,
    timeout_s: float,
    memory_mb: int = 512,
    cpu_s: int | None = None,
    files: dict[str, bytes] | None = None,
    max_output_bytes: int = 1_000_000,
) -> SandboxResult:
    """``run_sandboxed`` in a worker thread, for graders' ``agrade``."""
    return await asyncio.to_thread(
        run_sandboxed,
        argv,
        stdin=stdin,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        cpu_s=cpu_s,
        files=files,
        max_output_bytes=max_output_bytes,
    )


# --------------------------------------------------------------------------- setup


def _resolve_program(name: str, path: str, workdir: Path) -> str | None:
    """The program's absolute path; relative paths are inside the sandbox directory."""
    if name in ("python", "python3"):
        return sys.executable
    if os.sep in name:
        full = os.path.join(workdir, name)  # an absolute name stays as it is
        return full if os.path.isfile(full) else None
    return shutil.which(name, path=path)


def _failed(isolation: str, started: float, message: str) -> SandboxResult:
    return SandboxResult(
        returncode=127,
        stdout=b"",
        stderr=message.encode(),
        timed_out=False,
        killed=False,
        duration_ms=(time.perf_counter() - started) * 1000,
        isolation=isolation,
        error=message,
    )


def _write_files(workdir: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"file name {name!r} must be a relative path inside the sandbox")
        target = workdir.joinpath(*rel.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        target.chmod(0o700)  # owner-executable so `./judge.sh` style commands work


def _remove_tree(path: Path) -> None:
    def make_writable_and_retry(func: Callable[..., object], failed: str, _exc: object) -> None:
        try:
            os.chmod(os.path.dirname(failed), stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
            func(failed)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=make_writable_and_retry)
    else:
        shutil.rmtree(path, onerror=make_writable_and_retry)


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


def _limits(*, memory_mb: int, cpu_s: int, data_only: bool) -> Callable[[], None]:
    """The ``preexec_fn`` that sets resource limits in the child before exec.

    All values are computed here, in the parent; the child only calls
    ``setrlimit`` (nothing that could take a lock held by another thread).
    """
    memory = max(16, memory_mb) * 1024 * 1024
    # RLIMIT_NPROC counts every process of the user, not only the program's,
    # so the cap is "what the user runs now plus a modest allowance".
    nproc = _user_process_count() + PROCESS_LIMIT
    wanted = [
        (resource.RLIMIT_DATA if data_only else resource.RLIMIT_AS, memory),
        (resource.RLIMIT_CPU, max(1, cpu_s)),
        (resource.RLIMIT_NPROC, nproc),
        (resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT),
        (resource.RLIMIT_NOFILE, OPEN_FILES_LIMIT),
        (resource.RLIMIT_CORE, 0),
    ]
    limits: list[tuple[int, int, int]] = []
    for res, value in wanted:
        soft, hard = resource.getrlimit(res)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        # CPU: SIGXCPU at the soft limit, SIGKILL one second later.
        new_hard = value + 1 if res == resource.RLIMIT_CPU else value
        if hard != resource.RLIM_INFINITY:
            new_hard = min(new_hard, hard)
        limits.append((res, value, new_hard))

    def preexec() -> None:
        for res, soft, hard in limits:
            try:
                resource.setrlimit(res, (soft, hard))
            except (ValueError, OSError):
                pass

    return preexec


# ---------------------------------------------------------------------- bubblewrap


def _bwrap_binary() -> str | None:
    configured = os.environ.get(_ENV_BWRAP, "").strip()
    if configured.lower() in ("off", "0", "false", "no", "none"):
        return None
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("bwrap")


def _choose_isolation() -> tuple[str | None, str]:
    bwrap = _bwrap_binary()
    if bwrap is None:
        return None, SUBPROCESS
    problem = _bwrap_problem(bwrap)
    if problem:
        return None, f"{SUBPROCESS} (bubblewrap failed to start: {problem})"
    return bwrap, BUBBLEWRAP


@functools.lru_cache(maxsize=8)
def _bwrap_problem(bwrap: str) -> str | None:
    """Start bwrap once with the usual namespaces; the error text, or None if it works."""
    with tempfile.TemporaryDirectory(prefix="eval-sandbox-probe-") as probe:
        try:
            done = subprocess.run(
                [bwrap, *_bwrap_args(Path(probe).resolve(), "/bin/true"), "--", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
                env={"PATH": "/usr/bin:/bin"},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
    if done.returncode != 0:
        return done.stderr.decode("utf-8", errors="replace").strip()[-300:] or f"exit {done.returncode}"
    return None


def _bwrap_args(workdir: Path, program: str) -> list[str]:
    args = [
        "--die-with-parent",  # bwrap's children die when the sandbox is killed
        "--new-session",  # no TIOCSTI on the caller's terminal
        "--unshare-user", "--uid", str(_SANDBOX_UID), "--gid", str(_SANDBOX_UID),
        "--unshare-pid",  # killing bwrap's init kills every process in the sandbox
        "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--cap-drop", "ALL",
        "--ro-bind", "/usr", "/usr",
    ]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    # Only the parts of /etc that programs need to start (not shadow, not keys).
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
                 "passwd", "group", "nsswitch.conf", "ssl", "ca-certificates"):
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for extra in _program_binds(program, workdir):
        args += ["--ro-bind", extra, extra]
    args += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    return args


def _program_binds(program: str, workdir: Path) -> list[str]:
    """Paths outside /usr the program needs: the Python install, or the program file."""
    if program == sys.executable:
        candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    else:  # e.g. ~/.bun/bin/bun: expose that file only, not its whole folder
        candidates = [os.path.abspath(program), os.path.realpath(program)]
    binds: list[str] = []
    for path in map(os.path.abspath, candidates):
        if not os.path.exists(path) or path in ("/", "/tmp"):
            continue
        real = os.path.realpath(path)
        if real == "/usr" or real.startswith(("/usr/", "/proc/", str(workdir) + "/")):
            continue  # already visible (e.g. /bin/true is /usr/bin/true)
        if any(path == b or path.startswith(b + "/") for b in binds):
            continue
        binds = [b for b in binds if not b.startswith(path + "/")] + [path]
    return binds


# ---------------------------------------------------------------------- running


def _communicate(
    proc: subprocess.Popen[bytes],
    stdin: bytes,
    timeout_s: float,
    max_output_bytes: int,
    workdir: Path,
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
                _kill_all(proc, workdir)
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
        _kill_all(proc, workdir)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
        pass
    return bytes(out[stdout_fd]), bytes(out[stderr_fd]), timed_out, truncated


def _kill_all(proc: subprocess.Popen[bytes], workdir: Path) -> None:
    """SIGKILL the program's process group and any process still tied to its directory."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # start_new_session: pgid == pid
    except (ProcessLookupError, PermissionError):
        pass
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
