"""Which suite file a skill folder is evaluated from (issues 19, 30): a second suite file is
refused naming both (one suite per package), a link loop is an error."""

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


def test_a_second_suite_file_is_refused_naming_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30 item 10: running eval.yaml and ignoring eval/tests.json lost half the author's
    tests behind a warning; a package holds one suite, and both files are named in one line."""
    root = folder(tmp_path)
    with pytest.raises(SpecErrors, match=r"twofiles: \(root\): several suite files: eval.yaml and eval/tests.json"):
        load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x")
    assert main(["validate", str(root)]) != 0
    captured = capsys.readouterr()
    (line,) = [x for x in (captured.out + captured.err).splitlines() if "several suite files" in x]
    assert "eval.yaml and eval/tests.json" in line and "one suite file per skill package" in line
    (root / "eval" / "tests.json").unlink()
    assert [c.id for c in load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x").suite.tests] == ["a"]


def test_a_file_the_suite_names_is_no_second_suite(tmp_path: Path) -> None:
    """A prompt file a promptfoo config reads (`file://prompt.json`) is part of that suite."""
    root = folder(tmp_path)
    (root / "eval" / "tests.json").unlink()
    (root / "eval.yaml").write_text(EVAL_YAML.replace("input: hi", "input: hi  # see prompt.json"))
    (root / "prompt.json").write_text('{"name": "p", "content": "hi", "evaluationMode": "llm"}')
    assert [c.id for c in load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x").suite.tests] == ["a"]


def test_a_suite_link_loop_is_named(tmp_path: Path) -> None:
    root = folder(tmp_path)
    (root / "eval.yaml").unlink()
    (root / "eval.yaml").symlink_to(root / "eval.yaml")
    with pytest.raises(SpecErrors, match=r"eval.yaml: .*symbolic link loop"):
        load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x")
