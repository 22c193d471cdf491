"""The per-case workspace of an agent target: staged, compared, removed.

A fresh folder holds the skill under ``skills/<name>/`` (its ``evals/`` folder left out: it holds
the expectations the agent is graded on) and the case's input files at the paths the suite wrote
(text, binary, a directory's files). After the run every regular file is hashed again: those that
are new or changed are the run's output files, kept with their size, sha256 and text (up to
``MAX_FILE_TEXT_CHARS``; binary files keep no text).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from eval_pipelines.suite.models import InputFile
from eval_pipelines.suite.package import IGNORED_PARTS

SKILLS_DIR = "skills"
# Text kept per output file (stored in model_outputs.files and shown to the judge), and for all the
# files of one run together: past it a file keeps its size and hash, its text is left out.
MAX_FILE_TEXT_CHARS = 100_000
MAX_RUN_TEXT_CHARS = 1_000_000
# Files hashed when the run ends; a workspace with more is reported, not walked further.
MAX_WORKSPACE_FILES = 5_000


class StagingError(ValueError):
    """An input file cannot be placed in the workspace (a path leaving it, a file gone)."""


@dataclass
class CaseWorkspace:
    root: Path
    skill_dir: str | None  # workspace-relative, e.g. skills/pdf
    staged: list[str] = field(default_factory=list)  # input files, workspace-relative
    before: dict[str, str] = field(default_factory=dict)  # path -> sha256 at the start

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def inside(root: Path, relative: str) -> Path:
    """``root / relative`` when it stays inside ``root`` after resolving links; else StagingError."""
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise StagingError(f"{relative!r} is not a relative path inside the workspace")
    target = (root / pure).resolve()
    if not target.is_relative_to(root):
        raise StagingError(f"{relative!r} leads outside the workspace")
    return target


def stage(skill_root: Path | None, skill_name: str | None, input_files: Iterable[InputFile],
          skills_dir: str = SKILLS_DIR) -> CaseWorkspace:
    """A new workspace with the skill (under ``skills_dir``: Claude Code looks in ``.claude/skills``)
    and the input files; raises StagingError (the folder removed)."""
    root = Path(tempfile.mkdtemp(prefix="eval-agent-")).resolve()
    space = CaseWorkspace(root, None)
    try:
        if skill_root is not None and skill_name:
            space.skill_dir = f"{skills_dir}/{skill_name}"
            shutil.copytree(skill_root, root / skills_dir / skill_name, symlinks=True,
                            ignore=_skill_ignore(skill_root))
        for item in input_files:
            target = inside(root, item.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copyfile(item.source, target)
            except OSError as exc:
                raise StagingError(f"cannot stage {item.path}: {exc.strerror or exc}") from None
            space.staged.append(item.path)
        space.before = {path: digest for path, digest, _ in _files(root)}
    except (StagingError, OSError, shutil.Error) as exc:
        space.remove()
        raise StagingError(str(exc)) from None
    return space


def _skill_ignore(skill_root: Path):  # noqa: ANN202 - shutil's ignore callback
    top = skill_root.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {n for n in names if n in IGNORED_PARTS}
        if Path(folder).resolve() == top:
            skipped.add("evals")  # the expectations: not for the agent to read
        return skipped
    return ignore


def _files(root: Path) -> Iterable[tuple[str, str, int]]:
    """(relative path, sha256, size) of every regular file, links not followed."""
    count = 0
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            count += 1
            if count > MAX_WORKSPACE_FILES:
                return
            data = path.read_bytes()
            yield path.relative_to(root).as_posix(), hashlib.sha256(data).hexdigest(), len(data)


def changed_files(space: CaseWorkspace) -> list[dict[str, Any]]:
    """The files the run created or changed: {"path", "size", "sha256", "status", "binary", "text",
    "truncated"}; text is kept up to MAX_FILE_TEXT_CHARS characters (MAX_RUN_TEXT_CHARS for all the
    files together), binary files keep none."""
    found: list[dict[str, Any]] = []
    budget = MAX_RUN_TEXT_CHARS
    for path, digest, size in _files(space.root):
        if space.before.get(path) == digest:
            continue
        data = (space.root / path).read_bytes()
        text, binary = _text(data)
        kept = None if text is None else text[:min(MAX_FILE_TEXT_CHARS, budget)]
        budget -= len(kept or "")
        found.append({"path": path, "size": size, "sha256": digest,
                      "status": "changed" if path in space.before else "created", "binary": binary,
                      "text": kept, "truncated": text is not None and len(kept or "") < len(text)})
    return found


def deleted_files(space: CaseWorkspace) -> list[str]:
    """Files of the start (input files, the skill's) that the run removed."""
    return sorted(path for path in space.before if not (space.root / path).is_file())


def _text(data: bytes) -> tuple[str | None, bool]:
    if b"\0" in data[:8192]:
        return None, True
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return None, True
