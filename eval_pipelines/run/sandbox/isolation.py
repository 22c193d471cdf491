"""The sandbox's isolation levels, the choice between them, and the limits they share.

Levels, strongest first (``choose_isolation`` picks the first that starts here):

* ``namespaces`` (``namespaces``/``launcher``): own mount, PID,
  IPC, UTS and network namespaces, a read-only root with a fresh ``/proc``,
  as root a uid of the run's own (else a user namespace without
  capabilities). Needs no extra package. Preferred when running as root,
  where it binds the process count and bubblewrap cannot.
* ``bubblewrap`` (``bwrap``): the same namespaces through ``bwrap``;
  preferred when not root (it is the widely reviewed tool for that case).
* ``dropped-uid``: root without namespaces (e.g. a container that forbids
  ``unshare``): the program only runs as a uid of the run's own.
* ``subprocess+rlimits``: the caller's user, resource limits only.

Only the first two stop a hostile program from reading the caller's keys in
``/proc``, outliving the run, fork-bombing and writing outside its directory
(docs/security.md has the measured table). Under the other two, untrusted
code is refused unless the operator opts in with ``--allow-unsandboxed-code``
or ``EVAL_PIPELINES_ALLOW_UNSANDBOXED_CODE=1``.

``EVAL_PIPELINES_SANDBOX`` forces a level (``namespaces``, ``bubblewrap``,
``dropped-uid``, ``subprocess``); ``EVAL_PIPELINES_BWRAP`` names the bwrap
binary, or ``off`` to never use it.
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
from dataclasses import dataclass
from typing import Callable

from eval_pipelines.run.sandbox.bwrap import bwrap_binary, bwrap_problem
from eval_pipelines.run.sandbox.namespaces import PROCESS_CAP, can_drop_uid, namespaces_problem

NAMESPACES = "namespaces"
BUBBLEWRAP = "bubblewrap"
DROPPED_UID = "dropped-uid"
SUBPROCESS = "subprocess+rlimits"
STRONG_LEVELS = (NAMESPACES, BUBBLEWRAP)

FILE_SIZE_LIMIT = 10 * 1024 * 1024  # RLIMIT_FSIZE: largest file the program may write
OPEN_FILES_LIMIT = 64  # RLIMIT_NOFILE
PROCESS_LIMIT = 64  # RLIMIT_NPROC headroom over the user's current process count (shared uid)
# JavaScript runtimes reserve many GB of *virtual* address space up front (V8's
# heap cage, code range and WebAssembly guard regions) while using little of it,
# so an RLIMIT_AS of a few hundred MB stops `node` before it runs a line. For
# them we cap RLIMIT_DATA instead: since Linux 4.7 it counts private writable
# mappings, i.e. memory the program actually asks to use, not reservations.
DATA_LIMITED_RUNTIMES = ("node", "nodejs", "bun", "deno")

ENV_LEVEL = "EVAL_PIPELINES_SANDBOX"
ENV_ALLOW = "EVAL_PIPELINES_ALLOW_UNSANDBOXED_CODE"
_TRUE = ("1", "true", "yes", "on")
_LEVEL_ALIASES = {"namespaces": NAMESPACES, "bubblewrap": BUBBLEWRAP, "bwrap": BUBBLEWRAP,
                  "dropped-uid": DROPPED_UID, "uid": DROPPED_UID, "subprocess": SUBPROCESS,
                  SUBPROCESS: SUBPROCESS, "plain": SUBPROCESS}


@dataclass(frozen=True)
class Isolation:
    level: str  # one of the four names above
    bwrap: str | None = None  # the bwrap binary, at the bubblewrap level
    why_not_stronger: str = ""  # what failed above this level

    @property
    def label(self) -> str:
        """What ``grades.details.isolation`` records."""
        return f"{self.level} ({self.why_not_stronger})" if self.why_not_stronger else self.level

    @property
    def strong(self) -> bool:
        return self.level in STRONG_LEVELS

    @property
    def drops_uid(self) -> bool:
        return self.level == DROPPED_UID or (self.level == NAMESPACES and can_drop_uid())


# --------------------------------------------------------------------- environment


def scrubbed_environment() -> dict[str, str]:
    """``PATH`` and ``LANG`` only: never the caller's API keys or other secrets.

    The caller adds ``HOME`` and ``TMPDIR`` (the run's directory) once it exists.
    """
    return {
        "PATH": os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG") or "C.UTF-8",
    }


# ----------------------------------------------------------------------- the level


def choose_isolation() -> Isolation:
    """The strongest level that starts here (or the one ``EVAL_PIPELINES_SANDBOX`` forces)."""
    forced = os.environ.get(ENV_LEVEL, "").strip().lower()
    if forced and forced != "auto":
        level = _LEVEL_ALIASES.get(forced)
        if level is None:
            return Isolation(SUBPROCESS, why_not_stronger=f"unknown {ENV_LEVEL}={forced!r}; "
                             f"use one of namespaces, bubblewrap, dropped-uid, subprocess")
        return _forced(level)
    root = os.geteuid() == 0
    order = [NAMESPACES, BUBBLEWRAP] if root else [BUBBLEWRAP, NAMESPACES]
    problems: list[str] = []
    for level in order:
        problem = _problem(level)
        if problem is None:
            return Isolation(level, bwrap=bwrap_binary() if level == BUBBLEWRAP else None,
                             why_not_stronger="; ".join(problems))
        problems.append(problem)
    fallback = DROPPED_UID if can_drop_uid() else SUBPROCESS
    return Isolation(fallback, why_not_stronger="; ".join(problems))


def _forced(level: str) -> Isolation:
    problem = _problem(level)
    if problem is None:
        return Isolation(level, bwrap=bwrap_binary() if level == BUBBLEWRAP else None)
    fallback = DROPPED_UID if can_drop_uid() and level != SUBPROCESS else SUBPROCESS
    return Isolation(fallback, why_not_stronger=problem)


def _problem(level: str) -> str | None:
    if level == NAMESPACES:
        problem = namespaces_problem(can_drop_uid())
        return None if problem is None else f"namespaces failed to start: {problem}"
    if level == BUBBLEWRAP:
        bwrap = bwrap_binary()
        if bwrap is None:
            return "bubblewrap is not installed" if not os.environ.get("EVAL_PIPELINES_BWRAP") \
                else "bubblewrap is off (EVAL_PIPELINES_BWRAP)"
        problem = bwrap_problem(bwrap)
        return None if problem is None else f"bubblewrap failed to start: {problem}"
    if level == DROPPED_UID:
        return None if can_drop_uid() else "dropping to another uid needs root"
    return None


def refusal(isolation: Isolation) -> str | None:
    """Why untrusted code may not run at this level, or None when it may."""
    if isolation.strong or os.environ.get(ENV_ALLOW, "").strip().lower() in _TRUE:
        return None
    weak = ("it runs as a uid of its own but can write to world-writable folders and use the network"
            if isolation.level == DROPPED_UID else
            "it would run as the pipeline's user: it could read the pipeline's API keys in /proc, "
            "outlive the run and write anywhere the pipeline can")
    return (f"untrusted code refused: the strongest sandbox available here is {isolation.label}, and {weak}. "
            f"Allow user namespaces or install bubblewrap, or pass --allow-unsandboxed-code "
            f"(or set {ENV_ALLOW}=1) to run it anyway")


@functools.lru_cache(maxsize=1)
def make_caller_undumpable() -> None:
    """Weak levels: hide this process's /proc/<pid>/environ (and memory) from same-uid children.

    ``PR_SET_DUMPABLE 0`` makes those files root's; only root can still read them.
    It also stops core dumps and debugger attaches to the pipeline.
    """
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass


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


def rlimits(*, memory_mb: int, cpu_s: int, data_only: bool, own_uid: bool) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for the program, computed in the parent.

    With a uid of its own the process cap is absolute (``PROCESS_CAP``);
    otherwise ``RLIMIT_NPROC`` counts every process of the caller's user, so the
    cap is "what the user runs now plus a modest allowance".
    """
    memory = max(16, memory_mb) * 1024 * 1024
    nproc = PROCESS_CAP if own_uid else _user_process_count() + PROCESS_LIMIT
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
    return limits


def rlimits_preexec(limits: list[tuple[int, int, int]]) -> Callable[[], None]:
    """The ``preexec_fn`` that sets the limits in the child (only ``setrlimit``: no locks)."""

    def preexec() -> None:
        for res, soft, hard in limits:
            try:
                resource.setrlimit(res, (soft, hard))
            except (ValueError, OSError):
                pass

    return preexec
