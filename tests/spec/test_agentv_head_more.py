"""AgentV HEAD features of the example suites that were refused before issue 18's last round:
custom assertions without their file, ``tests[].vars``, ``mode: conversation``, ``preprocessors``,
``workspace.scope``/``docker``, ``environment.setup``, ``extensions``.

Expected values come from AgentV's own examples, README files and tests (named at each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loader import load_suite


def _write(tmp_path: Path, text: str, name: str = "dataset.eval.yaml") -> Path:
    file = tmp_path / name
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


def _refusal(file: Path) -> str:
    with pytest.raises(SpecErrors) as caught:
        load_suite(file)
    return str(caught.value.errors[0])


CUSTOM = """\
tests:
  - id: greeting-response
    input: Say hello and introduce yourself
    assert:
      - type: contains
        value: Hello
      - type: word-count
"""


def test_custom_assertion_without_its_file_says_what_agentv_would_run(tmp_path: Path) -> None:
    # AgentV (examples/features/sdk-custom-assertion): `type: word-count` with no `value` is the custom
    # assertion .agentv/assertions/word-count.ts; registry/assertion-discovery.ts searches the eval
    # file's folder and its parents. Without the file the refusal says so, in one line.
    first = _refusal(_write(tmp_path / "evals", CUSTOM))
    assert "tests[0].assert[1]" in first and "\n" not in first
    assert "custom assertion" in first and ".agentv/assertions/word-count.ts" in first


def test_custom_assertion_with_its_file_in_a_parent_folder_runs_it(tmp_path: Path) -> None:
    (tmp_path / ".agentv" / "assertions").mkdir(parents=True)
    (tmp_path / ".agentv" / "assertions" / "word-count.js").write_text("console.log('{}')\n", encoding="utf-8")
    suite, _ = load_suite(_write(tmp_path / "evals", CUSTOM))
    judge = suite.tests[0].assertions[1]
    assert judge.type == "code_judge" and judge.config["command"][0] == "node"
    assert judge.config["command"][1].endswith("word-count.js")


def test_a_builtin_type_missing_its_value_has_no_custom_assertion_hint(tmp_path: Path) -> None:
    # `contains` is one of AgentV's built-ins: a missing value is only that.
    first = _refusal(_write(tmp_path, "tests: [{id: a, input: hi, assert: [{type: contains}]}]\n"))
    assert "value" in first and "custom assertion" not in first
