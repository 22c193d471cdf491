"""The ``bubblewrap`` isolation level: the ``bwrap`` command line and its probe.

Used by ``sandbox_isolation.choose_isolation``; the paths a program needs
(``program_binds``) are shared with the ``namespaces`` level.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_ENV_BWRAP = "EVAL_PIPELINES_BWRAP"
_SANDBOX_UID = 65534  # "nobody" inside bubblewrap's user namespace
# Only the parts of /etc that programs need to start (not shadow, not keys).
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
             "passwd", "group", "nsswitch.conf", "ssl", "ca-certificates", "hosts", "resolv.conf")
SYSTEM_TOPS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def bwrap_binary() -> str | None:
    configured = os.environ.get(_ENV_BWRAP, "").strip()
    if configured.lower() in ("off", "0", "false", "no", "none"):
        return None
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=8)
def bwrap_problem(bwrap: str) -> str | None:
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


def bwrap_args(workdir: Path, program: str, *, network: bool = False,
               writable: tuple[Path, ...] = (), cwd: Path | None = None) -> list[str]:
    """bwrap's options (before ``--``) for running ``program`` with ``workdir`` writable."""
    args = [
        "--die-with-parent",  # bwrap's children die when the sandbox is killed
        "--new-session",  # no TIOCSTI on the caller's terminal
        "--unshare-user", "--uid", str(_SANDBOX_UID), "--gid", str(_SANDBOX_UID),
        "--unshare-pid",  # killing bwrap's init kills every process in the sandbox
        "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--cap-drop", "ALL",
        "--ro-bind", "/usr", "/usr",
    ]
    if not network:
        args.append("--unshare-net")
    for top in SYSTEM_TOPS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for extra in program_binds(program, workdir):
        args += ["--ro-bind", extra, extra]
    for folder in (workdir, *writable):
        args += ["--bind", str(folder), str(folder)]
    args += ["--chdir", str(cwd or workdir)]
    return args


def program_binds(program: str, workdir: Path) -> list[str]:
    """Paths outside /usr the program needs: the Python install, or the program file."""
    if program == sys.executable:
        candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                      os.path.realpath(sys.executable)]
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
