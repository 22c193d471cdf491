"""The per-run workspace (seed 001 ``workspace``, seed 000 ``setup``/``teardown``).

A fresh folder for each (date, skill version): the ``template`` copied in,
``eval/fixtures/`` available as ``fixtures/``, then the ``setup`` script run
in it with a timeout and the ``setup.environment`` variables. Command targets
see it as ``EVAL_WORKSPACE``; graders that inspect files (``agent_judge``) read
it after the run. ``teardown`` runs when the model phase ends, whatever
happened. The folder is kept until the partition is evaluated again.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from eval_pipelines.spec.models import Suite, WorkspaceRepo, WorkspaceScript
from eval_pipelines.run.targets.command import scrubbed_environment

DEFAULT_TIMEOUT_MS = 120_000


class WorkspaceError(RuntimeError):
    """Setup failed: every case of the run becomes an error row with this message."""


@dataclass(frozen=True)
class Workspace:
    path: Path
    environment: dict[str, str]


def _argv(script: str | list[str]) -> list[str]:
    argv = shlex.split(script) if isinstance(script, str) else list(script)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def run_script(step: str, script: WorkspaceScript, cwd: Path, env: dict[str, str], package_root: Path) -> None:
    if not script.script:
        return
    argv = _argv(script.script)
    # Script paths are relative to the package, like every other path in a suite.
    for i, arg in enumerate(argv[1:], start=1):
        candidate = package_root / arg
        if not os.path.isabs(arg) and candidate.is_file():
            argv[i] = str(candidate)
    timeout = (script.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        raise WorkspaceError(f"{step} could not start {argv[0]!r}: {exc.strerror or exc}") from None
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise WorkspaceError(f"{step} timed out after {timeout:g} s") from None
    if proc.returncode != 0:
        tail = stderr[-500:].decode("utf-8", errors="replace").strip()
        raise WorkspaceError(f"{step} exited with {proc.returncode}: {tail}")


def prepare(suite: Suite, package_root: Path, folder: Path) -> Workspace:
    """Create the workspace and run setup; raises :class:`WorkspaceError`."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    spec = suite.workspace
    template = package_root / spec.template if spec and spec.template else None
    if template is not None:
        if not template.resolve().is_relative_to(package_root.resolve()) or not template.is_dir():
            raise WorkspaceError(f"workspace template {spec.template!r} is not a folder inside the package")
        shutil.copytree(template, folder, symlinks=False)
    else:
        folder.mkdir()
    fixtures = package_root / "eval" / "fixtures"
    if fixtures.is_dir():
        shutil.copytree(fixtures, folder / "fixtures", dirs_exist_ok=True, symlinks=False)
    extra = dict(spec.setup.environment) if spec and spec.setup else {}
    extra["EVAL_WORKSPACE"] = str(folder)
    env = scrubbed_environment() | extra
    for repo in spec.repos if spec else []:
        _clone(repo, folder, env)
    if spec and spec.setup:
        run_script("setup", spec.setup, folder, env, package_root)
    return Workspace(folder, extra)


def _clone(repo: WorkspaceRepo, folder: Path, env: dict[str, str]) -> None:
    """``git clone`` a ``workspace.repos`` entry into its path inside the workspace."""
    target = (folder / repo.path).resolve()
    if not target.is_relative_to(folder.resolve()):
        raise WorkspaceError(f"repo path {repo.path!r} is outside the workspace")
    argv = ["git", "clone", "--quiet"]
    if repo.depth:
        argv += ["--depth", str(repo.depth)]
    if repo.ref:
        argv += ["--branch", repo.ref]
    run_script(f"clone of {repo.url}", WorkspaceScript(script=[*argv, "--", repo.url, str(target)]), folder, env,
               folder)


def teardown(suite: Suite, package_root: Path, workspace: Workspace) -> str | None:
    """Run teardown; returns a problem to log instead of raising (the results stand)."""
    spec = suite.workspace
    if not spec or not spec.teardown:
        return None
    try:
        # The run's variables (setup.environment), then the teardown's own.
        env = scrubbed_environment() | workspace.environment | dict(spec.teardown.environment)
        run_script("teardown", spec.teardown, workspace.path, env, package_root)
    except WorkspaceError as exc:
        return str(exc)
    return None


def needs_workspace(suite: Suite, package_root: Path) -> bool:
    return suite.workspace is not None or (package_root / "eval" / "fixtures").is_dir()
