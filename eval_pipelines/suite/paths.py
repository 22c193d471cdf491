"""Which files a suite may read.

Inside a skill package a suite may read its own package and the project's
declared datasets folder, nothing else: a hostile package cannot pull
``/etc/passwd`` in as a dataset. A suite loaded on its own (CLI ``validate``
on a single file) has no package root, so only the datasets rule applies when
one is configured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_pipelines.suite.errors import SpecError
from eval_pipelines.suite.source import Document


@dataclass(frozen=True)
class PathPolicy:
    allowed_roots: tuple[Path, ...] = field(default_factory=tuple)
    datasets_dir: Path | None = None

    def resolve(self, candidate: Path, written: str) -> Path:
        """The file a reference names; ``datasets/x.csv`` may also mean the project's."""
        resolved = candidate.resolve()
        if not resolved.exists() and self.datasets_dir is not None:
            parts = Path(written).parts
            if parts and parts[0] == "datasets":
                fallback = (self.datasets_dir / Path(*parts[1:])).resolve()
                if fallback.exists():
                    return fallback
        return resolved

    def allows(self, file: Path) -> bool:
        if not self.allowed_roots:
            return True
        resolved = file.resolve()
        roots = list(self.allowed_roots) + ([self.datasets_dir] if self.datasets_dir else [])
        return any(resolved.is_relative_to(root.resolve()) for root in roots)

    def check(self, file: Path, doc: Document, path: tuple[Any, ...], errors: list[SpecError]) -> bool:
        if self.allows(file):
            return True
        errors.append(SpecError(str(doc.file), path, f"{file} is outside the skill package",
                                doc.line_of(path), "a file inside the package or the datasets folder"))
        return False
