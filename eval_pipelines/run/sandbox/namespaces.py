"""The ``namespaces`` and ``dropped-uid`` levels: no bubblewrap needed.

``namespaces`` starts ``launcher.py`` (a standalone script) which
unshares mount, PID, IPC, UTS and network namespaces, builds a read-only root
with a fresh ``/proc``, drops to a uid of the run's own (as root) or empties
its capabilities (in a user namespace, when not root), and ``exec``s the
program as PID 1 of its namespace. ``dropped-uid`` (root, but no namespaces)
only switches the program to a uid of the run's own.

A uid of its own per run is what makes the process bound hold for root
(``RLIMIT_NPROC`` counts the processes of that uid only, and the kernel does
not exempt it) and what lets the cleanup find every descendant: whatever the
program does -- ``setsid``, ``chdir /``, ``exec`` with an empty environment --
its processes keep that uid, and ``kill(-1, SIGKILL)`` sent as that uid ends
them all.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval_pipelines.run.sandbox.bwrap import ETC_FILES, SYSTEM_TOPS, program_binds

LAUNCHER = Path(__file__).with_name("launcher.py")
# Sandboxed programs run as SANDBOX_GID and a uid above it picked per run; the
# range is far from the uids real accounts use (and inside the default user
# namespace mapping).
SANDBOX_GID = 0x60000000
UID_SPAN = 1 << 24
PROCESS_CAP = 128  # RLIMIT_NPROC for a run's own uid: the program and all its descendants
TMP_BYTES = 64 * 1024 * 1024  # the private /tmp and /dev/shm
_EXIT_GRACE_S = 5.0


def can_drop_uid() -> bool:
    """Root, with a default uid mapping wide enough for the sandbox's uids."""
    if os.geteuid() != 0:
        return False
    try:
        for line in Path("/proc/self/uid_map").read_text().splitlines():
            inside, _outside, count = (int(x) for x in line.split())
            if inside <= SANDBOX_GID and SANDBOX_GID + UID_SPAN <= inside + count:
                return True
    except (OSError, ValueError):
        return False
    return False


def pick_uid() -> int:
    """A uid no process uses now (checked, so two runs do not share one)."""
    in_use = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                in_use.add(entry.stat().st_uid)
            except OSError:
                pass
    while True:
        uid = SANDBOX_GID + 1 + secrets.randbelow(UID_SPAN - 1)
        if uid not in in_use:
            return uid


def give_to(uid: int, folder: Path) -> None:
    """Make the run's directory the run's uid's: it is the only place it owns."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), uid, SANDBOX_GID)
    os.chown(folder, uid, SANDBOX_GID)


def share_with_sandbox(folder: Path) -> None:
    """An extra writable folder (a workspace): group-writable for every run's uid."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            _group_writable(os.path.join(dirpath, name))
    _group_writable(str(folder))


def _group_writable(path: str) -> None:
    try:
        st = os.lstat(path)
        if os.path.islink(path):
            return
        os.chown(path, st.st_uid, SANDBOX_GID)
        extra = 0o2070 if os.path.isdir(path) else 0o060
        os.chmod(path, (st.st_mode & 0o7777) | extra)
    except OSError:
        pass


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid``: ``kill(-1)`` sent as that uid reaches exactly them.

    The kill happens in the child between switching to the uid and ``exec``
    (``/bin/true``, which any uid may run), so no interpreter the uid may not
    enter is needed, and it is one call: a forking program cannot race it.
    """
    if not _has_processes(uid):
        return
    true = "/usr/bin/true" if os.path.exists("/usr/bin/true") else "/bin/true"
    try:
        subprocess.run([true], user=uid, group=SANDBOX_GID, extra_groups=[], env={}, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=False,
                       preexec_fn=_kill_all_of_mine)
    except (OSError, subprocess.SubprocessError):
        pass
    # SIGKILLed processes take a moment to exit: return once none is left (bounded).
    deadline = time.monotonic() + _EXIT_GRACE_S
    while _has_processes(uid) and time.monotonic() < deadline:
        time.sleep(0.02)


def _has_processes(uid: int) -> bool:
    return any(_uid_of(entry.path) == uid for entry in os.scandir("/proc") if entry.name.isdigit())


def _kill_all_of_mine() -> None:
    os.kill(-1, signal.SIGKILL)


def _uid_of(proc_dir: str) -> int | None:
    """The real uid (as RLIMIT_NPROC counts) of a live process; None for zombies and the gone."""
    try:
        status = Path(proc_dir, "status").read_text()
        if "\nState:\tZ" in status or "\nState:\tX" in status:
            return None
        for line in status.splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def launcher_argv(*, argv: list[str], env: dict[str, str], workdir: Path, root: Path, uid: int | None,
                  network: bool, writable: tuple[Path, ...], rlimits: list[tuple[int, int, int]],
                  cwd: Path | None = None) -> list[str]:
    """The command line that runs ``argv`` (an absolute program) under the launcher."""
    symlinks, ro_binds = [], []
    for top in SYSTEM_TOPS:
        if os.path.islink(top):
            symlinks.append([top, os.readlink(top)])
        elif os.path.isdir(top):
            ro_binds.append(top)
    ro_binds.append("/usr")
    ro_binds += [f"/etc/{name}" for name in ETC_FILES]
    ro_binds += program_binds(argv[0], workdir)
    config = {
        "argv": argv, "env": env, "cwd": str(cwd or workdir), "root": str(root),
        "symlinks": symlinks, "ro_binds": ro_binds, "rw_binds": [str(workdir), *map(str, writable)],
        "tmp_bytes": TMP_BYTES, "network": network, "rlimits": rlimits,
        "uid": uid, "gid": SANDBOX_GID if uid is not None else None,
        "user_namespace": os.geteuid() != 0,
    }
    return [_launcher_python(), "-I", "-S", str(LAUNCHER), json.dumps(config)]


def _launcher_python() -> str:
    return sys.executable


@functools.lru_cache(maxsize=4)
def namespaces_problem(drop_uid: bool) -> str | None:
    """Run ``true`` under the launcher once; the error text, or None when it works."""
    with tempfile.TemporaryDirectory(prefix="eval-sandbox-probe-") as probe:
        workdir, root = Path(probe, "work"), Path(probe, "root")
        workdir.mkdir()
        root.mkdir()
        uid = pick_uid() if drop_uid else None
        if uid is not None:
            give_to(uid, workdir)
        true = "/usr/bin/true" if os.path.exists("/usr/bin/true") else "/bin/true"
        argv = launcher_argv(argv=[true], env={"PATH": "/usr/bin:/bin"}, workdir=workdir, root=root, uid=uid,
                             network=False, writable=(), rlimits=[])
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={},
                                  start_new_session=True)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        finally:
            if uid is not None:
                kill_uid(uid)
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", errors="replace").strip().replace("eval-sandbox-setup-error: ", "")
        return text[-300:] or f"exit {done.returncode}"
    return None
