"""What ``eval-pipelines run PATH`` evaluates: a skill folder, a zip, or a bare suite file.

A bare suite file (any format :func:`eval_pipelines.formats.loader.detect_format`
knows: eval.yaml, tests.json, harness, prompt modes, a JSONL/CSV dataset with
its sidecar YAML, ...) has no SKILL.md, so it gets a skill version of its own:
the suite's name made into a skill name, and its ``version`` or a hash of the
file. Its targets are looked up, nearest last so it wins: the project's
``targets.yaml``, a ``targets.yaml`` in the current folder, one beside the file.
``--target`` picks among them; otherwise the file's own ``execution.targets``.
"""

from __future__ import annotations

import hashlib
import re
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Sequence

from eval_pipelines.analysis.exit_codes import ExitCode, run_exit_code
from eval_pipelines.pipeline.project import ProjectPaths
from eval_pipelines.reports.step_summary import CheckOutcome
from eval_pipelines.run.targets.config import TargetConfig, load_targets_file
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import LoadedSkill, bind_targets, load_suite, suite_targets, withheld_key_warnings
from eval_pipelines.suite.package import SKILL_VERSION, SkillPackage
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.store.partition import Partition


def is_skill_package(source: Path) -> bool:
    return source.is_dir() or source.suffix.lower() == ".zip"


def skill_name_for(suite_name: str, file: Path) -> str:
    """A valid skill name (lowercase letters, digits, inner hyphens) from the suite's name or file."""
    for candidate in (suite_name, file.stem, "suite"):
        slug = re.sub(r"[^a-z0-9]+", "-", candidate.lower()).strip("-")[:64].strip("-")
        if slug:
            return slug
    return "suite"


def targets_near(file: Path, paths: ProjectPaths, cwd: Path) -> tuple[dict[str, TargetConfig], list[str]]:
    """Targets from the project, the current folder and beside the file (later wins), and the file's own."""
    targets = dict(paths.project_targets())
    own: list[str] = []
    seen: set[Path] = {paths.targets_file.resolve()} if paths.targets_file else set()
    # The current folder's file is the operator's; the one beside the suite (when that is another
    # folder) came with the suite, so its keys go only to hosts the operator trusts (key_policy.py).
    for candidate, declared_by in ((cwd / "targets.yaml", "operator"), (file.parent / "targets.yaml", "suite")):
        if candidate.is_file() and candidate.resolve() not in seen:
            seen.add(candidate.resolve())
            configs = load_targets_file(candidate, declared_by=declared_by)
            targets.update({c.name: c for c in configs})
            if candidate.parent.resolve() == file.parent.resolve():
                own = [c.name for c in configs]
    return targets, own


def load_bare_suite(file: Path, paths: ProjectPaths, cwd: Path,
                    chosen_targets: Sequence[str] | None = None) -> LoadedSkill:
    """A suite file on its own, as a skill version the stages can run and store."""
    policy = PathPolicy(allowed_roots=(file.parent.resolve(),), datasets_dir=paths.datasets_dir)
    suite, warnings = load_suite(file, policy)
    targets, own = targets_near(file, paths, cwd)
    for config in suite_targets(suite, file):  # its own providers (promptfoo); targets.yaml wins by name
        targets.setdefault(config.name, config)
        own.append(config.name)
    if chosen_targets:
        _refuse_unknown(file, chosen_targets, targets)
        suite.execution.targets = list(chosen_targets)
        for case in suite.tests:
            case.targets = None
    bind_targets(suite, file, targets, own)
    warnings += withheld_key_warnings(suite, targets)
    content_hash = hashlib.sha256(file.read_bytes()).hexdigest()
    version = suite.version if suite.version and SKILL_VERSION.fullmatch(suite.version) else None
    if suite.version and version is None:
        warnings.append(f"{file}: version {suite.version!r} cannot name a skill version; "
                        f"using the file's hash instead")
    version = version or f"h-{content_hash[:10]}"
    package = SkillPackage(name=skill_name_for(suite.name, file), version=version,
                           description=suite.description or f"suite file {file.name}", body="",
                           root=file.parent.resolve(), source=file.resolve(), content_hash=content_hash)
    return LoadedSkill(package, suite, targets, warnings)


def _refuse_unknown(source: Path | str, chosen: Sequence[str], targets: dict[str, TargetConfig]) -> None:
    unknown = [t for t in chosen if t not in targets]
    if unknown:
        raise SpecErrors.single(source, f"unknown target(s) {unknown}", path=("--target",),
                                expected="one of " + ", ".join(sorted(targets)) if targets
                                else "a targets.yaml defining it (project, current folder or beside the file)")


def load_run_source(source: Path, paths: ProjectPaths, cwd: Path,
                    chosen_targets: Sequence[str] | None = None) -> LoadedSkill:
    """The skill package or bare suite file behind ``run PATH``, with ``--target`` applied."""
    if not source.exists():
        raise SpecErrors.single(source, "no such file or folder",
                                expected="a skill folder, a .zip package or a suite file")
    if not is_skill_package(source):
        return load_bare_suite(source, paths, cwd, chosen_targets)
    loaded = paths.load(source)
    if chosen_targets:
        _refuse_unknown(source, chosen_targets, loaded.targets)
        loaded.suite.execution.targets = list(chosen_targets)
        for case in loaded.suite.tests:
            case.targets = None
    return loaded


def finish_run(db_path: str, partition: Partition, checks: list[CheckOutcome],
               junit: str | None, summary: str | None, *, con: Any = None) -> ExitCode:
    """The run's exit code; writes the JUnit XML and appends the Markdown summary when asked.
    ``con``: an open connection to ``db_path`` (the one the run summary reads through)."""
    from eval_pipelines.reports.junit import write_junit
    from eval_pipelines.reports.step_summary import append_summary, summary_markdown
    from eval_pipelines.store.connection import connect

    with connect(db_path, read_only=True) if con is None else nullcontext(con) as con:
        outputs, errors = con.execute(
            "SELECT count(*), count(error) FROM model_outputs WHERE eval_date = ? AND skill_version = ?",
            [partition.eval_date, partition.skill_version]).fetchone()
    code = run_exit_code([c.name for c in checks if not c.passed], outputs, errors)
    if code == ExitCode.ALL_ERRORS:
        print(f"every one of the {outputs} model calls ended in an error: check the target's server and key")
    if junit:
        print(f"JUnit XML: {write_junit(db_path, partition, Path(junit))}")
    if summary:
        append_summary(Path(summary), summary_markdown(db_path, partition, checks, code))
        print(f"Summary: {summary}")
    return code
