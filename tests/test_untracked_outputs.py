"""``make demo`` leaves no untracked files: every folder a bundled skill's suite writes its reports
to (``reporting.output_dir``, relative to the project root) is ignored by git."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from eval_pipelines.pipeline.project import ProjectPaths

PROJECT = Path(__file__).resolve().parents[1]


def test_every_bundled_reporting_output_dir_is_ignored(tmp_path: Path) -> None:
    if shutil.which("git") is None or subprocess.run(["git", "-C", str(PROJECT), "rev-parse"],
                                                     capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    paths = ProjectPaths.from_root(PROJECT, str(tmp_path / "unused.duckdb"))
    folders = set()
    for skill_md in sorted(PROJECT.glob("skills/*/*/SKILL.md")):
        reporting = paths.load(skill_md.parent).suite.reporting
        if reporting is not None and reporting.output_dir:
            folders.add(reporting.output_dir)
    assert folders, "no bundled suite declares reporting.output_dir: this test has nothing to check"
    for folder in sorted(folders):
        probe = f"{Path(folder).as_posix().removeprefix('./')}/calculator-1.0.0.json"
        ignored = subprocess.run(["git", "-C", str(PROJECT), "check-ignore", "-q", probe])
        assert ignored.returncode == 0, f"{folder} (a suite's reporting.output_dir) is not in .gitignore"
