"""The sandbox's two isolation levels and the clean environment both share.

``choose_isolation`` picks bubblewrap when a ``bwrap`` binary is configured or
on ``PATH`` *and* actually starts (it can be installed yet refused user
namespaces), else the ``subprocess+rlimits`` fallback. ``bwrap_args`` is the
bubblewrap command line (namespaces, read-only system directories, the run's
directory as the only writable place); ``rlimits_preexec`` is the
``preexec_fn`` that sets the resource limits in the child under either level;
``scrubbed_environment`` is the environment without the caller's secrets.

The public entry point is ``eval_pipelines.run.sandbox``; see its docstring
for what a sandboxed run gets and what the fallback does not protect.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
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


# --------------------------------------------------------------------- environment


def scrubbed_environment() -> dict[str, str]:
    """``PATH`` and ``LANG`` only: never the caller's API keys or other secrets.

    The caller adds ``HOME`` and ``TMPDIR`` (the run's directory) once it exists.
    """
    return {
        "PATH": os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG") or "C.UTF-8",
    }


# ------------------------------------------------------------------------- rlimits


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


def rlimits_preexec(*, memory_mb: int, cpu_s: int, data_only: bool) -> Callable[[], None]:
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


def choose_isolation() -> tuple[str | None, str]:
    """The bwrap binary to run under (None for the fallback) and the level's name."""
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
                [bwrap, *bwrap_args(Path(probe).resolve(), "/bin/true"), "--", "true"],
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


def bwrap_args(workdir: Path, program: str) -> list[str]:
    """bwrap's options (before ``--``) for running ``program`` with ``workdir`` writable."""
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
