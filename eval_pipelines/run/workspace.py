"""The per-run workspace (seed 001 ``workspace``, seed 000 ``setup``/``teardown``).

A fresh folder for each (date, skill version): the ``template`` copied in,
``eval/fixtures/`` available as ``fixtures/``, then the ``setup`` script run
in it (sandboxed: it is the package's code) with a timeout and the
``setup.environment`` variables. Command targets
see it as ``EVAL_WORKSPACE``; graders that inspect files (``agent_judge``) read
it after the run. ``teardown`` runs when the model phase ends, whatever
happened. The folder is kept until the partition is evaluated again.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from eval_pipelines.suite.models import Suite, WorkspaceRepo, WorkspaceScript
from eval_pipelines.run.sandbox.isolation import scrubbed_environment
from eval_pipelines.run.targets.command import SECRET_NAME as _SECRET_NAME

DEFAULT_TIMEOUT_MS = 120_000


class WorkspaceError(RuntimeError):
    """Setup failed: every case of the run becomes an error row with this message."""


@dataclass(frozen=True)
class Workspace:
    path: Path
    environment: dict[str, str]


def run_script(step: str, script: WorkspaceScript, cwd: Path, env: dict[str, str], package_root: Path) -> None:
    """Run a setup/teardown script of the package -- untrusted code -- in the sandbox.

    It starts in the workspace (its one writable folder besides the sandbox's
    own), with a copy of the package beside it so its paths resolve as they
    do in the package, the variables ``env`` names (``EVAL_WORKSPACE``, the
    setup's ``environment``; secret-looking names dropped) and no network.
    """
    from eval_pipelines.run.sandbox.runner import run_sandboxed

    if not script.script:
        return
    argv = shlex.split(script.script) if isinstance(script.script, str) else list(script.script)
    if not argv:
        return
    timeout = (script.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000
    result = run_sandboxed(argv, stdin=b"", timeout_s=timeout, memory_mb=2048, copy_from=package_root,
                           writable=(cwd,), cwd=cwd,
                           extra_env={k: v for k, v in env.items() if not _SECRET_NAME.search(k)})
    if result.error:
        raise WorkspaceError(f"{step} could not start {argv[0]!r}: {result.error} [sandbox: {result.isolation}]")
    if result.timed_out:
        raise WorkspaceError(f"{step} timed out after {timeout:g} s")
    if result.returncode != 0:
        raise WorkspaceError(f"{step} exited with {result.returncode}: {result.stderr_tail()}")


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
    for repo in spec.repos if spec else []:
        _clone(repo, folder)
    if spec and spec.setup:
        run_script("setup", spec.setup, folder, extra, package_root)
    return Workspace(folder, extra)


def _clone(repo: WorkspaceRepo, folder: Path) -> None:
    """``git clone`` a ``workspace.repos`` entry into its path inside the workspace.

    git is trusted code (ours, not the package's) and needs the network, so it runs
    outside the sandbox, with an environment without secrets and a bounded time.
    """
    target = (folder / repo.path).resolve()
    if not target.is_relative_to(folder.resolve()):
        raise WorkspaceError(f"repo path {repo.path!r} is outside the workspace")
    argv = ["git", "clone", "--quiet"]
    if repo.depth:
        argv += ["--depth", str(repo.depth)]
    if repo.ref:
        argv += ["--branch", repo.ref]
    env = scrubbed_environment() | {"GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run([*argv, "--", repo.url, str(target)], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=DEFAULT_TIMEOUT_MS / 1000, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise WorkspaceError(f"clone of {repo.url}: git is not installed") from None
    except subprocess.TimeoutExpired:
        raise WorkspaceError(f"clone of {repo.url} timed out after {DEFAULT_TIMEOUT_MS // 1000} s") from None
    if done.returncode != 0:
        raise WorkspaceError(f"clone of {repo.url} exited with {done.returncode}: {done.stderr.strip()[-500:]}")


def teardown(suite: Suite, package_root: Path, workspace: Workspace) -> str | None:
    """Run teardown; returns a problem to log instead of raising (the results stand)."""
    spec = suite.workspace
    if not spec or not spec.teardown:
        return None
    try:
        # The run's variables (setup.environment), then the teardown's own.
        env = workspace.environment | dict(spec.teardown.environment)
        run_script("teardown", spec.teardown, workspace.path, env, package_root)
    except WorkspaceError as exc:
        return str(exc)
    return None


def needs_workspace(suite: Suite, package_root: Path) -> bool:
    return suite.workspace is not None or (package_root / "eval" / "fixtures").is_dir()
