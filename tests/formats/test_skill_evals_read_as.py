"""Keys real evals.json files write in place of skill-creator's, read as an agent following
skill-creator reads them (formats/skills/read_as.py), and paths written from the repository root."""

from __future__ import annotations

import json
from pathlib import Path

from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.errors import SpecErrors
from tests.formats.test_skill_evals_json import skill


def _load(tmp_path: Path, evals: list[dict]):
    root = skill(tmp_path / "s", {"skill_name": "csv-summary", "evals": evals})
    return load_suite(root / "evals" / "evals.json")


def test_input_is_the_task_and_the_criteria_keys_are_the_expectations(tmp_path: Path) -> None:
    suite, warnings = _load(tmp_path, [
        {"id": "0", "input": "北京今天穿什么", "expected_behavior": "调用 index 接口", "expected_commands": ["x index"]},
        {"id": "1", "prompt": "p", "checks": ["No hardcoded User-Agent", "LF line ends"]},
        {"id": "2", "prompt": "p", "expected_behavior": ["Splits the task"],
         "evaluation_criteria": {"backend": "Docker chosen"}},
        {"id": "3", "prompt": "p", "input": "kept", "expectations": ["E"], "checks": ["kept too"]},
        {"id": "4", "prompt": "p", "expect": ["kali_status first"], "fail": ["nmap before bootstrap"]}])
    moji, rss, multi, plain, ad = suite.tests
    assert moji.input[0].content == "北京今天穿什么"
    assert moji.assertions[0].config["items"] == ["调用 index 接口"]
    assert moji.metadata == {"expected_commands": ["x index"]}  # not a criteria key: kept, with a warning
    assert rss.assertions[0].config["items"] == ["No hardcoded User-Agent", "LF line ends"]
    assert multi.assertions[0].config["items"] == ["Splits the task", "backend: Docker chosen"]
    # with `prompt` and `expectations` given, the other keys are only kept (skill-creator's own keys win)
    assert plain.assertions[0].config["items"] == ["E"] and plain.metadata == {"input": "kept", "checks": ["kept too"]}
    assert ad.assertions[0].config["items"] == ["kali_status first"] and ad.metadata == {"fail": ["nmap before bootstrap"]}
    assert any("evals[0].input: not a skill-creator key; read as the prompt" in w for w in warnings)
    assert any("evals[1].checks: not a skill-creator key; read as expectations" in w for w in warnings)
    assert any("evals[0].expected_commands: skill-creator ignores this field too" in w for w in warnings)


def test_expected_output_as_an_object_is_the_description_as_json(tmp_path: Path) -> None:
    suite, warnings = _load(tmp_path, [{"id": 1, "prompt": "p", "expected_output": {"title_max_chars": 25}}])
    (case,) = suite.tests
    assert json.loads(case.criteria) == {"title_max_chars": 25} and case.assertions[0].type == "llm_judge"
    assert any("evals[0].expected_output: an object, not a description" in w for w in warnings)


def test_a_path_from_the_repository_root_names_the_package_file(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    root = skill(repo / "skill", {"evals": [{"id": 1, "prompt": "p", "expectations": ["x"],
                                             "files": ["skill/evals/files/sales.csv"]}]})
    (repo / "outside.txt").write_text("not the package's")
    suite, warnings = load_suite(root / "evals" / "evals.json")
    assert [f.path for f in suite.tests[0].input_files] == ["skill/evals/files/sales.csv"]
    assert Path(suite.tests[0].input_files[0].source) == (root / "evals" / "files" / "sales.csv").resolve()
    assert any("is written from the repository root; read as evals/files/sales.csv" in w for w in warnings)
    # a path that only resolves outside the skill folder is still refused, in one line
    (root / "evals" / "evals.json").write_text(json.dumps(
        {"evals": [{"id": 1, "prompt": "p", "expectations": ["x"], "files": ["x/../outside.txt"]}]}))
    try:
        load_suite(root / "evals" / "evals.json")
    except SpecErrors as exc:
        (error,) = [str(e) for e in exc.errors]
        assert "input file x/../outside.txt: the package does not hold it" in error and "\n" not in error
    else:
        raise AssertionError("a file outside the package was accepted")
