"""skill-creator's ``evals/evals.json`` (Agent Skills) read as a suite, and a skill package carrying it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from eval_pipelines.cli import EXIT_INVALID, EXIT_OK, main
from eval_pipelines.grading.registry import parse_params
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import detect_format, load_skill, load_suite
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import load_document

# As skill-creator's references/schemas.md documents it.
EVALS = {
    "skill_name": "csv-summary",
    "evals": [
        {"id": 1, "prompt": "Which region sold most?", "expected_output": "South, with 20 sales.",
         "files": ["evals/files/sales.csv"],
         "expectations": ["The answer names the south region", "The answer gives the number 20"]},
        {"id": 2, "prompt": "How many regions are there?", "expected_output": "Two regions."},
    ],
}


def skill(root: Path, evals: dict | None = None) -> Path:
    (root / "evals" / "files").mkdir(parents=True)
    (root / "SKILL.md").write_text(textwrap.dedent("""\
        ---
        name: csv-summary
        description: Summarises CSV files.
        version: 1.0.0
        ---
        Summarise the CSV you are given.
    """), encoding="utf-8")
    (root / "evals" / "files" / "sales.csv").write_text("region,sales\r\nnorth,10\r\nsouth,20\r\n", encoding="utf-8")
    (root / "evals" / "evals.json").write_text(json.dumps(evals or EVALS, indent=2), encoding="utf-8")
    (root / "targets.yaml").write_text("targets:\n  - {name: default, type: openai, model: m}\n", encoding="utf-8")
    return root


def test_evals_json_is_its_own_format_and_maps_onto_tests(tmp_path: Path) -> None:
    root = skill(tmp_path / "csv-summary")
    file = root / "evals" / "evals.json"
    assert detect_format(load_document(file)) == "agent-skills-evals"
    suite, _ = load_suite(file, PathPolicy(allowed_roots=(root,)))
    assert suite.name == "csv-summary" and suite.format == "agent-skills-evals"
    first, second = suite.tests
    assert first.id == "1" and first.criteria == first.expected_output == "South, with 20 sales."
    assert first.input[0].content == ("Which region sold most?\n"
                                      '<file path="evals/files/sales.csv">\nregion,sales\nnorth,10\nsouth,20\n</file>')
    graded = first.assertions[0]
    assert graded.type == "expectations" and suite.scoring == "all_pass"
    assert parse_params("expectations", graded.config).items == ["The answer names the south region",
                                                                 "The answer gives the number 20"]
    assert [a.type for a in second.assertions] == ["llm_judge"]  # judged on expected_output


def test_agentv_spelling_assertions_is_read_too(tmp_path: Path) -> None:
    evals = {"evals": [{"id": 7, "prompt": "p", "assertions": ["It says hello"]}]}
    root = skill(tmp_path / "s", evals)
    suite, _ = load_suite(root / "evals" / "evals.json", PathPolicy(allowed_roots=(root,)))
    assert suite.tests[0].id == "7" and suite.tests[0].assertions[0].type == "expectations"


@pytest.mark.parametrize("evals, message", [
    ({"evals": [{"id": 1, "prompt": "p", "expectations": ["x"], "expected_outptu": "y"}]},
     "unknown field 'expected_outptu'; did you mean 'expected_output'?"),
    ({"evals": [{"id": 1, "prompt": "p", "expectation": ["x"]}]}, "did you mean 'expectations'?"),
    ({"evals": [{"id": 1, "prompt": "", "expectations": ["x"]}]}, "invalid prompt"),
    ({"evals": [{"id": 1, "prompt": "p", "files": ["evals/files/nope.txt"], "expectations": ["x"]}]},
     "evals[0].files[0]: eval 1: input file evals/files/nope.txt: the package does not hold it"),
    ({"evals": [{"id": 1, "prompt": "p", "files": ["/tmp/x/paper.tex"], "expectations": ["x"]}]},
     "evals[0].files[0]: /tmp/x/paper.tex is an absolute path outside the package"),
    ({"evals": [{"id": 1, "prompt": "p", "expectation": ["x"]}]},
     "unknown field 'expectation'; did you mean 'expectations'?"),
    ({"evals": [{"id": 1, "prompt": "p", "expectations": [{"id": "e1", "weight": 2}]}]},
     "invalid expectations (expected a list of non-empty statements (strings, or objects with text, "
     "description or name))"),
    ({"evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}, {"id": 1, "prompt": "q", "expectations": ["y"]}]},
     "duplicate eval id '1'"),
    ({"evals": [], "skill_name": "s"}, "no evals"),
])
def test_bad_evals_json_is_refused_clearly(tmp_path: Path, evals: dict, message: str) -> None:
    root = skill(tmp_path / "s", evals)
    with pytest.raises(SpecErrors) as caught:
        load_suite(root / "evals" / "evals.json", PathPolicy(allowed_roots=(root,)))
    assert message in str(caught.value)


def test_a_skill_package_carrying_evals_json_loads_like_any_other(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = skill(tmp_path / "csv-summary")
    loaded = load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x")
    assert loaded.package.name == "csv-summary" and len(loaded.suite.tests) == 2
    assert loaded.suite.system_prompt.startswith("Summarise the CSV")
    assert main(["validate", str(root)]) == EXIT_OK
    assert "csv-summary@1.0.0: 2 tests" in capsys.readouterr().out
    (root / "evals" / "evals.json").write_text('{"evals": [{"id": 1}]}', encoding="utf-8")
    assert main(["validate", str(root)]) == EXIT_INVALID
    assert "evals[0].prompt: required field is missing" in capsys.readouterr().out


def test_real_world_spellings_load_and_ignored_keys_are_kept_with_a_warning(tmp_path: Path) -> None:
    """Issue 31: `name`, expectations as `{text}` objects, `files` as `{path, ...}`, a top-level list,
    a `cases` wrapper; keys skill-creator's tools ignore are metadata with a stored warning."""
    root = skill(tmp_path / "s", {"skill_name": "csv-summary", "evals": [
        {"id": 1, "name": "Top region", "prompt": "Which region sold most?", "weight": 2,
         "files": [{"path": "evals/files/sales.csv", "purpose": "the data"}],
         "expectations": [{"id": "e1", "text": "Names the south region"}, "Gives the number 20"]}]})
    suite, warnings = load_suite(root / "evals" / "evals.json")
    (case,) = suite.tests
    assert case.name == "Top region"
    assert case.assertions[0].config["items"] == [
        "Names the south region", "Gives the number 20"]
    assert case.metadata == {"weight": 2, "files": [{"path": "evals/files/sales.csv", "purpose": "the data"}]}
    assert [f.path for f in case.input_files] == ["evals/files/sales.csv"]
    assert "south,20" in case.input[0].content
    assert any("evals[0].weight: skill-creator ignores this field too (kept in the case's metadata)" in w
               for w in warnings)
    assert any("evals[0].files[0].purpose: skill-creator ignores this field too" in w for w in warnings)
    evals = root / "evals" / "evals.json"
    evals.write_text(json.dumps([{"id": 1, "prompt": "p", "assertions": ["x"]}]))
    assert [t.id for t in load_suite(evals)[0].tests] == ["1"]
    evals.write_text(json.dumps({"skill_name": "csv-summary",
                                 "cases": [{"id": "a", "prompt": "p", "expectations": ["x"]}]}))
    assert [t.id for t in load_suite(evals)[0].tests] == ["a"]


def test_directories_and_binary_files_are_input_files(tmp_path: Path) -> None:
    root = skill(tmp_path / "s", {"evals": [{"id": 1, "prompt": "p", "expectations": ["x"], "files": [
        "evals/files/sales.csv", "evals/files/dir", "evals/files/a.bin"]}]})
    (root / "evals" / "files" / "dir" / "sub").mkdir(parents=True)
    (root / "evals" / "files" / "dir" / "sub" / "b.txt").write_text("b")
    (root / "evals" / "files" / "a.bin").write_bytes(b"\0\xff")
    (case,) = load_suite(root / "evals" / "evals.json")[0].tests
    assert [(f.path, f.inlined, f.reason) for f in case.input_files] == [
        ("evals/files/sales.csv", True, None),
        ("evals/files/dir/sub/b.txt", False, "a file of the directory evals/files/dir"),
        ("evals/files/a.bin", False, "a binary file")]
    assert '<file path="evals/files/sales.csv">' in case.input[0].content and "b.txt" not in case.input[0].content


def test_the_plugin_layout_evals_at_the_repository_root(tmp_path: Path) -> None:
    """Issue 31: a plugin repository keeps evals/evals.json at its root and SKILL.md under skills/<name>/."""
    from eval_pipelines.run.targets.config import OpenAITargetConfig
    from eval_pipelines.suite.package import find_packages

    repo = tmp_path / "skills" / "plugin-repo"
    (repo / "evals" / "files").mkdir(parents=True)
    for name in ("csv-summary", "other"):
        (repo / "skills" / name).mkdir(parents=True)
        (repo / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")
    (repo / "evals" / "files" / "sales.csv").write_text("region,sales\nsouth,20\n")
    (repo / "evals" / "evals.json").write_text(json.dumps({"skill_name": "csv-summary", "evals": [
        {"id": 1, "prompt": "Which region?", "files": ["evals/files/sales.csv"], "expectations": ["south"]}]}))
    assert find_packages(tmp_path / "skills") == [repo / "skills" / "csv-summary", repo / "skills" / "other"]
    targets = {"default": OpenAITargetConfig(name="default", model="m")}
    loaded = load_skill(repo / "skills" / "csv-summary", datasets_dir=None, extract_dir=tmp_path / "x",
                        project_targets=targets)
    assert loaded.suite.format == "agent-skills-evals"
    assert [f.path for f in loaded.suite.tests[0].input_files] == ["evals/files/sales.csv"]
    with pytest.raises(SpecErrors, match="no eval suite found"):  # the evals name another skill
        load_skill(repo / "skills" / "other", datasets_dir=None, extract_dir=tmp_path / "x", project_targets=targets)
    (repo / "evals" / "evals.json").write_text(json.dumps({"skill_name": "csv-summary", "evals": [
        {"id": 1, "prompt": "p", "files": ["evals/files/missing.csv"], "expectations": ["x"]}]}))
    with pytest.raises(SpecErrors) as caught:
        load_skill(repo / "skills" / "csv-summary", datasets_dir=None, extract_dir=tmp_path / "x",
                   project_targets=targets)
    (line,) = str(caught.value).splitlines()
    assert "evals[0].files[0]: eval 1: input file evals/files/missing.csv: the package does not hold it" in line


def test_the_plugin_repository_given_at_its_root(tmp_path: Path) -> None:
    """The repository root (evals/evals.json there) is the package; the skill folder is the SKILL.md's
    folder (matched by skill_name, else the only one within 3 levels), which an agent target installs."""
    from eval_pipelines.run.targets.agent.loop import AgentTarget
    from eval_pipelines.run.targets.config import AgentTargetConfig
    from eval_pipelines.suite.package import skill_folder

    repo = tmp_path / "repo"
    (repo / "evals" / "files").mkdir(parents=True)
    (repo / "evals" / "files" / "sales.csv").write_text("region,sales\nsouth,20\n")
    for layout, name in (("skill", "csv-summary"), ("plugins", "other"), (".hidden", "csv-summary")):
        (repo / layout / name).mkdir(parents=True)
        (repo / layout / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d {layout}\n---\nbody\n")
    (repo / "evals" / "evals.json").write_text(json.dumps({"skill_name": "csv-summary", "evals": [
        {"id": 1, "prompt": "Which region?", "files": ["evals/files/sales.csv"], "expectations": ["south"]}]}))
    targets = {"default": AgentTargetConfig(name="default", model="m")}
    loaded = load_skill(repo, datasets_dir=None, extract_dir=tmp_path / "x", project_targets=targets)
    assert loaded.package.root == repo and loaded.package.skill_folder == repo / "skill" / "csv-summary"
    assert loaded.package.name == "csv-summary" and loaded.suite.system_prompt == "body\n"
    assert [f.path for f in loaded.suite.tests[0].input_files] == ["evals/files/sales.csv"]
    agent = AgentTarget(targets["default"], repo, api_key=None, base_url="http://127.0.0.1:9/v1")
    assert agent.skill.root == repo / "skill" / "csv-summary" and agent.skill.description == "d skill"
    # No skill_name: the only SKILL.md within 3 levels (hidden folders skipped); two: none is guessed.
    (repo / "evals" / "evals.json").write_text(json.dumps({"evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]}))
    assert skill_folder(repo) is None
    with pytest.raises(SpecErrors, match="SKILL.md not found"):
        load_skill(repo, datasets_dir=None, extract_dir=tmp_path / "x", project_targets=targets)
    (repo / "plugins" / "other" / "SKILL.md").unlink()
    assert skill_folder(repo) == repo / "skill" / "csv-summary"
    (repo / "skills" / "a" / "b" / "c").mkdir(parents=True)
    (repo / "skills" / "a" / "b" / "c" / "SKILL.md").write_text("---\nname: deep\ndescription: d\n---\n")
    assert skill_folder(repo) == repo / "skill" / "csv-summary"  # skills/a/b/c is 4 levels down: not looked at


def test_root_evals_json_test_cases_eval_name_and_expectation_objects(tmp_path: Path) -> None:
    """evals.json beside SKILL.md; `test_cases` wrapper; `eval_name`; expectation objects read by
    text, else description, else name; `kind` and `expected_behavior` kept as ignored keys."""
    root = tmp_path / "s"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "evals.json").write_text(json.dumps({"skill_name": "s", "version": "1", "test_cases": [
        {"id": "a", "eval_name": "First", "kind": "trigger", "prompt": "p", "expected_behavior": "b",
         "assertions": [{"name": "n1", "description": "Says hello"}, {"name": "Is short", "check": "len < 9"},
                        {"kind": "regex", "text": "T"}]}]}))
    loaded = load_skill(root, datasets_dir=None, extract_dir=tmp_path / "x", project_targets={
        "default": __import__("eval_pipelines.run.targets.config", fromlist=["x"]).OpenAITargetConfig(
            name="default", model="m")})
    (case,) = loaded.suite.tests
    assert case.name == "First" and loaded.suite.format == "agent-skills-evals"
    assert case.assertions[0].config["items"] == ["Says hello", "Is short", "T"]
    assert case.metadata == {"kind": "trigger", "expected_behavior": "b"}
    assert any("evals[0].kind: skill-creator ignores this field too" in w for w in loaded.warnings)


def test_an_eval_with_nothing_to_grade_is_run_and_stored_as_not_evaluated(tmp_path: Path) -> None:
    evals = {"evals": [{"id": 3, "prompt": "p", "assertions": []}, {"id": 4, "prompt": "q", "expected_output": "e",
                                                                   "assertions": []}]}
    root = skill(tmp_path / "s", evals)
    suite, warnings = load_suite(root / "evals" / "evals.json")
    first, second = suite.tests
    assert first.assertions == [] and [a.type for a in second.assertions] == ["llm_judge"]
    assert any("eval 3 has neither expectations nor expected_output: run, not graded (not_evaluated)" in w
               for w in warnings)


def test_a_run_stores_the_eval_without_expectations_as_not_evaluated(tmp_path: Path, monkeypatch, capsys) -> None:
    from tests.support.fake_openai import FakeOpenAIServer
    from tests.support.field_projects import Models, make_skill, sql

    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    skill_dir = make_skill(tmp_path, {"evals/evals.json": json.dumps({"evals": [
        {"id": 3, "prompt": "look around"}, {"id": 4, "prompt": "say hi", "expectations": ["Says hi"]}]})})
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-evals-json")
        Models(server)
        db = tmp_path / "results.duckdb"
        assert main(["--root", str(tmp_path), "run", str(skill_dir), "--db", str(db)]) in (EXIT_OK, 1)
    statuses = dict(sql(db, "SELECT test_id, status FROM test_results"))
    assert statuses["3"] == "not_evaluated" and statuses["4"] != "not_evaluated"  # 4 went to the judge
    (warnings,) = sql(db, "SELECT warnings FROM suites")[0]
    assert "eval 3 has neither expectations nor expected_output" in str(warnings)


@pytest.mark.parametrize("key, meant", [
    ("expectation", "expectations"), ("expected_outptu", "expected_output"), ("promt", "prompt"),
    ("fiels", "files"), ("ids", "id"), ("kind", None), ("expected_behavior", None), ("eval_name", None),
    ("notes", None), ("type", None), ("prompts", "prompt"),
])
def test_a_likely_misspelling_is_a_small_edit_distance(key: str, meant: str | None) -> None:
    from eval_pipelines.formats.compat import likely_misspelling
    from eval_pipelines.formats.skills.evals_json import EVAL_KEYS

    assert likely_misspelling(key, EVAL_KEYS - {"eval_name"}) == meant
