"""Which suite file a skill folder is evaluated from (issue 19): a second one is named
in a warning (stored in `suites.warnings` like every load warning), a link loop is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_skill

SKILL_MD = "---\nname: twofiles\ndescription: Two suites.\nversion: 1.0.0\n---\n"
EVAL_YAML = "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: contains\n        value: hi\n"
TESTS_JSON = ('{"version": "2.0", "skill": "twofiles", "testCases": [{"id": "b", "name": "b", '
              '"input": {"prompt": "x"}, "expected": {"output": "x"}}]}')
TARGETS = "targets:\n  - name: echo\n    type: command\n    command: [echo, hi]\n"


def folder(tmp_path: Path) -> Path:
    root = tmp_path / "twofiles"
    (root / "eval").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "targets.yaml").write_text(TARGETS)
    (root / "eval.yaml").write_text(EVAL_YAML)
    (root / "eval" / "tests.json").write_text(TESTS_JSON)
    return root


def test_a_second_suite_file_is_named_in_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = folder(tmp_path)
    loaded = load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x")
    assert [c.id for c in loaded.suite.tests] == ["a"]  # eval.yaml comes first
    (warning,) = [w for w in loaded.warnings if "several suite files" in w]
    assert "eval.yaml" in warning and "eval/tests.json" in warning and "ignoring eval/tests.json" in warning
    assert main(["validate", str(root)]) == 0
    assert "ignoring eval/tests.json" in capsys.readouterr().err


def test_a_suite_link_loop_is_named(tmp_path: Path) -> None:
    root = folder(tmp_path)
    (root / "eval.yaml").unlink()
    (root / "eval.yaml").symlink_to(root / "eval.yaml")
    with pytest.raises(SpecErrors, match=r"eval.yaml: .*symbolic link loop"):
        load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x")
