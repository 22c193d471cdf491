"""A project folder: where skills, datasets, targets and results live (all overridable)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.suite.package import find_packages, open_package
from eval_pipelines.store.partition import Partition

if TYPE_CHECKING:  # the formats and targets are imported when a suite loads, not with the project
    from eval_pipelines.formats.loader import LoadedSkill
    from eval_pipelines.run.targets.config import TargetConfig


@dataclass(frozen=True)
class ProjectPaths:
    skills_dir: Path
    datasets_dir: Path
    db_path: str
    work_dir: Path
    targets_file: Path | None = None

    @classmethod
    def from_root(cls, root: Path, db_path: str | None = None) -> "ProjectPaths":
        targets = root / "targets.yaml"
        return cls(
            skills_dir=root / "skills",
            datasets_dir=root / "datasets",
            db_path=db_path or str(root / ".data" / "eval_pipelines.duckdb"),
            work_dir=root / ".data" / "packages",
            targets_file=targets if targets.is_file() else None,
        )

    def project_targets(self) -> dict[str, TargetConfig]:
        from eval_pipelines.run.targets.config import load_targets_file

        if self.targets_file is None:
            return {}
        return {t.name: t for t in load_targets_file(self.targets_file)}

    def workspace_dir(self, partition: Partition) -> Path:
        """Where a partition's run workspace lives (kept until the partition re-runs)."""
        return self.work_dir.parent / "workspaces" / partition.eval_date / partition.skill_version

    def load(self, source: Path) -> LoadedSkill:
        """A skill package (folder or zip) with its suite and targets, against this project."""
        from eval_pipelines.formats.loader import load_skill

        return load_skill(source, datasets_dir=self.datasets_dir, extract_dir=self.work_dir,
                          project_targets=self.project_targets())


def find_package_source(paths: ProjectPaths, skill_version: str) -> Path:
    """The folder or zip in the skills directory whose key is ``skill_version``."""
    problems = []
    for source in find_packages(paths.skills_dir):
        try:
            if open_package(source, paths.work_dir).key == skill_version:
                return source
        except SpecErrors as exc:
            problems.append(str(exc))
    hint = f"; packages that failed to open: {'; '.join(problems)}" if problems else ""
    raise SpecErrors.single(paths.skills_dir, f"skill version {skill_version!r} not found{hint}")


def _stamp(source: Path) -> tuple[int, int] | None:
    """What a package's key depends on, cheaply: its SKILL.md's (or zip's) mtime and size."""
    try:
        stat = (source / "SKILL.md" if source.is_dir() else source).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def discover_skill_versions(paths: ProjectPaths, memo: dict[Path, tuple[tuple[int, int], str]] | None = None,
                            max_opened: int | None = None) -> tuple[dict[str, Path], dict[Path, str]]:
    """Every valid skill version in the skills directory, and why the others were refused.

    ``memo`` (kept by the caller between calls) remembers each package's key by its
    SKILL.md's mtime and size: opening a package hashes all its files, which for 5,000
    packages took longer than a sensor tick may (docs/benchmarks.md, "Nightly fan-out");
    an unchanged package is then only stat'ed. ``max_opened`` bounds how many packages one
    call opens; the rest are left for the next call (with ``memo``, a sensor's next tick)."""
    found: dict[str, Path] = {}
    problems: dict[Path, str] = {}
    opened = 0
    for source in find_packages(paths.skills_dir):
        stamp = _stamp(source) if memo is not None else None
        remembered = memo.get(source) if memo is not None else None
        if stamp is not None and remembered is not None and remembered[0] == stamp:
            key = remembered[1]
        else:
            if max_opened is not None and opened >= max_opened:
                continue  # found by a later call
            opened += 1
            try:
                key = open_package(source, paths.work_dir).key
            except SpecErrors as exc:
                problems[source] = str(exc)
                continue
            if memo is not None and stamp is not None:
                memo[source] = (stamp, key)
        if key in found:
            problems[source] = f"{source}: duplicate skill version {key} (also {found[key]})"
            continue
        found[key] = source
    return found, problems
