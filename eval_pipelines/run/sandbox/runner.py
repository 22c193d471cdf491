"""Run untrusted programs (code judges, model-written functions, skill programs,
workspace scripts) in a sandbox.

Each run gets:

* a fresh, empty temporary working directory (``files`` are written into it,
  or a package folder copied into it, first) that is deleted afterwards; it is
  also ``HOME`` and ``TMPDIR``;
* an environment holding only ``PATH``, ``LANG``, ``HOME`` and ``TMPDIR`` plus
  what the caller names in ``extra_env`` -- never the caller's API keys or
  other secrets (under bubblewrap, which always sets it, also ``PWD``);
* its own session and process group, and resource limits set before ``exec``
  (address space or data size, CPU seconds, processes, file size, open files,
  no core dumps);
* a wall-clock timeout after which everything it started is killed; whatever
  the program left running when it exited is killed too;
* at the two strong levels (``namespaces``, ``bubblewrap``) its own PID, mount,
  IPC, UTS and (unless ``network``) network namespaces: it cannot see the
  pipeline's processes or their ``/proc/<pid>/environ``, writes only its
  directory (and ``writable`` folders), and dies whole with its first process;
  as root at ``namespaces`` also a uid of its own, so at most
  ``PROCESS_CAP`` processes.

``isolation`` picks the level (and refuses untrusted code at the weak
levels unless ``EVAL_PIPELINES_ALLOW_UNSANDBOXED_CODE`` is set); docs/security.md
has what each level prevents, measured. ``SandboxResult.isolation`` says which
level ran.

Plain Python, no Dagster; ``arun_sandboxed`` is the asyncio entry point. This
module is the public API and the run directory's lifecycle; the levels are in
``isolation``, ``namespaces`` (+ the standalone
``launcher`` script) and ``bwrap``; feeding, collecting, the
deadline and the cleanup of leftover processes are in ``process``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable

# The level names and limits are part of this module's API (tests and callers
# import them from here); they are defined next to the code that applies them.
from eval_pipelines.run.sandbox.bwrap import bwrap_args
from eval_pipelines.run.sandbox.isolation import (
    BUBBLEWRAP, DATA_LIMITED_RUNTIMES, DROPPED_UID, ENV_ALLOW, FILE_SIZE_LIMIT, NAMESPACES, OPEN_FILES_LIMIT,
    PROCESS_LIMIT, STRONG_LEVELS, SUBPROCESS, choose_isolation, make_caller_undumpable, refusal, rlimits,
    rlimits_preexec, scrubbed_environment,
)
from eval_pipelines.run.sandbox.launcher import SETUP_ERROR, SETUP_EXIT
from eval_pipelines.run.sandbox.namespaces import (
    PROCESS_CAP, SANDBOX_GID, give_to, launcher_argv, pick_uid, share_with_sandbox,
)
from eval_pipelines.run.sandbox.process import communicate

__all__ = [
    "BUBBLEWRAP", "DATA_LIMITED_RUNTIMES", "DROPPED_UID", "ENV_ALLOW", "FILE_SIZE_LIMIT", "NAMESPACES",
    "OPEN_FILES_LIMIT", "PROCESS_CAP", "PROCESS_LIMIT", "STRONG_LEVELS", "SUBPROCESS",
    "SandboxResult", "arun_sandboxed", "run_sandboxed",
]
MAX_COPY_BYTES = 64 * 1024 * 1024  # a skill package copied into the run's directory


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
    copy_from: Path | None = None,
    writable: tuple[Path, ...] = (),
    extra_env: dict[str, str] | None = None,
    network: bool = False,
    cwd: Path | None = None,
    copy_read_only: bool = False,
) -> SandboxResult:
    """Run ``argv`` in a sandbox; never raises for anything the program does.

    ``python``/``python3`` as ``argv[0]`` means the running interpreter
    (``sys.executable``); other bare names are looked up on ``PATH``. A program
    that cannot be found or started gives a result with ``error`` set and
    return code 127; so does untrusted code at a level too weak to run it
    (see ``sandbox_isolation.refusal``).

    ``copy_from`` is a folder copied into the run's directory first (a skill
    package for its own program; with ``copy_read_only`` its files cannot be written, e.g. the folder
    of a promptfoo config for the scripts it names); ``writable`` are extra folders the program may
    write (a workspace); ``extra_env`` adds variables (never secrets: the caller
    chooses them); ``network`` keeps the host's network (off by default);
    ``cwd`` is one of ``writable`` to start in instead of the run's directory
    (arguments naming files of the copied folder are then made absolute).
    """
    if not argv:
        raise ValueError("argv must not be empty")
    started = time.perf_counter()
    isolation = choose_isolation()
    refused = refusal(isolation)
    if refused:
        return _failed(isolation.label, started, refused)
    if not isolation.strong:
        make_caller_undumpable()
    env = scrubbed_environment() | dict(extra_env or {})
    workdir = Path(tempfile.mkdtemp(prefix="eval-sandbox-")).resolve()
    root = Path(tempfile.mkdtemp(prefix="eval-sandbox-root-")).resolve() if isolation.level == NAMESPACES else None
    uid = pick_uid() if isolation.drops_uid else None
    try:
        env["HOME"] = env["TMPDIR"] = str(workdir)
        try:
            if copy_from is not None:
                _copy_package(copy_from, workdir, copy_read_only)
            _write_files(workdir, files or {})
            if uid is not None:
                give_to(uid, workdir)
                for folder in writable:
                    share_with_sandbox(folder)
        except (OSError, ValueError, shutil.Error) as exc:
            return _failed(isolation.label, started, f"cannot prepare sandbox files: {exc}")
        program = _resolve_program(argv[0], env["PATH"], workdir)
        if program is None:
            return _failed(isolation.label, started, f"program {argv[0]!r} not found"
                           + ("" if os.sep in argv[0] else " on PATH"))
        argv = [program, *argv[1:]]
        start_in = workdir
        if cwd is not None and Path(cwd).resolve() != workdir:
            if Path(cwd).resolve() not in {Path(w).resolve() for w in writable}:
                raise ValueError("cwd must be one of the writable folders")
            start_in = Path(cwd).resolve()
            argv = [argv[0], *(str(workdir / a) if not os.path.isabs(a) and (workdir / a).is_file() else a
                               for a in argv[1:])]
        limits = rlimits(
            memory_mb=memory_mb,
            cpu_s=cpu_s if cpu_s is not None else int(timeout_s) + 1,
            data_only=Path(program).name.lower().startswith(DATA_LIMITED_RUNTIMES),
            own_uid=uid is not None,
        )
        popen_extra: dict = {}
        if isolation.level == NAMESPACES:
            assert root is not None
            argv = launcher_argv(argv=argv, env=env, workdir=workdir, root=root, uid=uid, network=network,
                                 writable=writable, rlimits=limits, cwd=start_in)
            preexec = None
        else:
            if isolation.level == BUBBLEWRAP:
                assert isolation.bwrap is not None
                argv = [isolation.bwrap, *bwrap_args(workdir, program, network=network, writable=writable,
                                                     cwd=start_in), "--", *argv]
            elif uid is not None:
                popen_extra = {"user": uid, "group": SANDBOX_GID, "extra_groups": []}
            preexec = rlimits_preexec(limits)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=start_in,
                env=env,
                start_new_session=True,  # own session and process group
                preexec_fn=preexec,
                close_fds=True,
                **popen_extra,
            )
        except OSError as exc:
            return _failed(isolation.label, started, f"cannot start {program!r}: {exc.strerror or exc}")
        stdout, stderr, timed_out, truncated = communicate(
            proc, stdin, timeout_s, max_output_bytes, workdir, uid
        )
        returncode = proc.returncode
        error = _setup_error(returncode, stderr) if isolation.level == NAMESPACES else None
        killed = timed_out or (returncode is not None and returncode < 0)
        return SandboxResult(
            returncode=returncode,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            killed=killed,
            duration_ms=(time.perf_counter() - started) * 1000,
            isolation=isolation.label,
            output_truncated=truncated,
            error=error,
        )
    finally:
        _remove_tree(workdir)
        if root is not None:
            _remove_tree(root)


async def arun_sandboxed(argv: list[str], **options: Any) -> SandboxResult:
    """``run_sandboxed`` in a worker thread, for graders' ``agrade`` and command targets.

    Takes exactly ``run_sandboxed``'s keyword arguments (one signature to keep, not two)."""
    return await asyncio.to_thread(run_sandboxed, argv, **options)


def _setup_error(returncode: int | None, stderr: bytes) -> str | None:
    """The launcher's message when the namespaces could not be set up or the program not started."""
    if returncode not in (SETUP_EXIT, 127):
        return None
    text = stderr.decode("utf-8", errors="replace")
    marker = text.rfind(SETUP_ERROR)
    return text[marker + len(SETUP_ERROR):].strip() or None if marker >= 0 else None


# This tool's own outputs when a skill folder is also the project folder (`run .` inside it):
# the DuckDB file being written and the Dagster instance are not the skill's to read.
NOT_COPIED = (".data", ".dagster")


def _copy_package(source: Path, workdir: Path, read_only: bool = False) -> None:
    """A copy of the package, links kept as links (one pointing outside stays dangling inside);
    ``read_only``: its files without write permission (the program reads them, never changes them)."""
    total = 0
    for path in source.rglob("*"):
        if set(path.relative_to(source).parts) & set(NOT_COPIED):
            continue
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
            if total > MAX_COPY_BYTES:
                raise ValueError(f"{source} holds more than {MAX_COPY_BYTES // 2**20} MB; "
                                 f"too large to copy into the sandbox")
    shutil.copytree(source, workdir, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*NOT_COPIED))
    if read_only:
        for path in workdir.rglob("*"):
            if path.is_file() and not path.is_symlink():
                path.chmod(path.stat().st_mode & ~0o222)


# ------------------------------------------------------------------ run directory


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
