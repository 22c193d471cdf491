"""Issue 30, items 6-12: what a suite names is honoured or refused at `validate`, never accepted
and dropped.

Each test builds a small project (tests/support/field_projects.py), runs `eval-pipelines
validate` or `run` through ``main([...])`` and reads the refusal line, or the effect from
DuckDB. ``tests/formats/field_contract.yaml`` names these tests as the evidence.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import EXIT_FAILED, EXIT_INVALID, EXIT_OK, main
from eval_pipelines.grading.graders._typescript import node_version, typescript_runner
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import Models, make_skill, sql, suite_json


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[Models]:
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dropped")
        yield Models(server)


def run(capsys: pytest.CaptureFixture[str], root: Path, skill: Path) -> tuple[int, str, Path]:
    db = root / "results.duckdb"
    capsys.readouterr()
    code = main(["--root", str(root), "run", str(skill), "--db", str(db)])
    out, err = capsys.readouterr()
    return code, out + err, db


def refusals(capsys: pytest.CaptureFixture[str], root: Path, skill: Path) -> list[str]:
    """`validate`'s error lines (it must exit with the invalid-input code)."""
    capsys.readouterr()
    code = main(["--root", str(root), "validate", str(skill)])
    out, err = capsys.readouterr()
    assert code == EXIT_INVALID, out + err
    return [line for line in (out + err).splitlines() if re.match(r"^\S+:\d+: ", line)]


def line_of(lines: list[str], fragment: str) -> str:
    (found,) = [line for line in lines if fragment in line]
    return found


# ---- 6. hybrid weights -------------------------------------------------------------------------

HYBRID_CASE = {"id": "tc-001", "name": "h", "input": {"prompt": "alpha"},
               "expected": {"output": "beta", "patterns": ["alph"]}, "evaluation": {"strategy": "hybrid"}}


def test_hybrid_weights_under_unknown_keys_are_refused_and_known_keys_weigh(capsys, models: Models,
                                                                            tmp_path: Path) -> None:
    bad = dict(HYBRID_CASE, evaluation={"strategy": "hybrid", "weights": {"exact": 2, "regexx": 1}})
    skill = make_skill(tmp_path / "bad", {"eval/tests.json": suite_json(testCases=[bad])})
    lines = refusals(capsys, tmp_path / "bad", skill)
    exact = line_of(lines, "weights.exact:")
    assert re.search(r"tests\.json:\d+: testCases\[0\]\.evaluation\.weights\.exact: 'exact' names no assertion "
                     r"of this case; did you mean 'exact_match'\? \(expected one of exact_match, regex_match\)", exact)
    assert "did you mean 'regex_match'?" in line_of(lines, "weights.regexx:")

    # Under the assertions' names the weights shape the score: exact fails, the pattern matches.
    good = dict(HYBRID_CASE, evaluation={"strategy": "hybrid", "weights": {"exact_match": 3, "regex_match": 1}})
    skill = make_skill(tmp_path / "good", {"eval/tests.json": suite_json(testCases=[good])})
    code, out, db = run(capsys, tmp_path / "good", skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT assertion_name, weight, passed FROM grades ORDER BY assertion_index") == [
        ("exact_match", 3.0, False), ("regex_match", 1.0, True)]
    assert sql(db, "SELECT score FROM test_results") == [(0.25,)]


# ---- 7. structural strict, current.execution ----------------------------------------------------

REGRESSION = """\
- id: {id}
  baseline: {{output: {{status: 200, body: {{users: [1]}}}}}}
  current: {{input: {id}}}
  comparison: {{type: structural}}
  grader: {{type: code, config: {{method: structural_match, strict: {strict}}}}}
"""


def test_structural_strict_decides_and_current_execution_is_refused(capsys, models: Models,
                                                                    tmp_path: Path) -> None:
    # The output adds a field and reorders the baseline's: only a strict match minds.
    grown = json.dumps({"body": {"users": [1]}, "status": 200, "extra": True})
    models.replies.update({json.dumps("loose"): grown, json.dumps("strict"): grown, "loose": grown, "strict": grown})
    suite = REGRESSION.format(id="loose", strict="false") + REGRESSION.format(id="strict", strict="true")
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    rows = sql(db, "SELECT test_id, passed, reason FROM grades ORDER BY test_id")
    assert rows[0] == ("loose", True, "structure matches the baseline")
    assert rows[1][:2] == ("strict", False) and "not in the baseline" in rows[1][2]

    (skill / "eval.yaml").write_text(suite.replace("current: {input: strict}",
                                                   "current: {input: strict, execution: {type: http}}"))
    (refusal,) = refusals(capsys, tmp_path, skill)
    assert re.search(r"eval\.yaml:8: \[1\]\.current\.execution: current\.execution is not run: a case runs "
                     r"against the suite's targets", refusal)


# ---- 8. unknown grader type / method ------------------------------------------------------------

GRADED = """\
- id: g
  input: {{type: prompt, content: hello}}
  expected_output: {{type: exact, value: hello}}
  grader: {grader}
"""


@pytest.mark.parametrize("grader, fragment, message", [
    ("{type: robot}", "[0].grader.type:", "unknown grader type 'robot' (expected code, model, human)"),
    ("{type: code, config: {method: fuzzy_match}}", "[0].grader.config.method:",
     "unknown grader method 'fuzzy_match'; did you mean 'exact_match'?"),
    ("{type: code, config: {method: exact_match, case_sensitiv: false}}", "[0].grader.config.case_sensitiv:",
     "unknown field 'case_sensitiv'; did you mean 'case_sensitive'?"),
    ("{type: model, config: {method: exact_match}}", "[0].grader.config.method:", "a model grader has no method"),
])
def test_unknown_grader_type_method_or_option_is_refused(capsys, models: Models, tmp_path: Path, grader: str,
                                                         fragment: str, message: str) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": GRADED.format(grader=grader)})
    (refusal,) = refusals(capsys, tmp_path, skill)
    assert re.match(r"^\S+eval\.yaml:4: ", refusal) and fragment in refusal and message in refusal
    # ... and never graded as `equals`: a valid grader next to it runs.
    (skill / "eval.yaml").write_text(GRADED.format(grader="{type: code, config: {method: exact_match}}"))
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("equals", True)]


# ---- 9. seed 003 folder layout: config/thresholds.yaml, config/graders.yaml -------------------

LAYOUT_SUITE = """\
eval_suite:
  name: layout
  environment: staging
  evals: [{$ref: capability/greet.yaml}]
"""
GREET = """\
schema_version: "1.0"
eval_type: capability
test_cases:
  - id: greet
    input: {type: prompt, content: hello}
    expected: {type: exact, value: goodbye}
    grader: {type: code, config: {method: exact_match}}
"""


def test_layout_thresholds_file_gates_the_run_and_graders_file_is_refused(capsys, models: Models,
                                                                          tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {
        "evals/eval-suite.yaml": LAYOUT_SUITE, "evals/capability/greet.yaml": GREET,
        "evals/config/thresholds.yaml": "mean_score: 0.5\nstaging: {pass_at_1: 0.9}\nproduction: {pass_at_1: 0.99}\n"})
    code, out, db = run(capsys, tmp_path, skill)
    # 0% pass rate against the file's gates: the run fails instead of exiting 0 with thresholds {}.
    assert code == EXIT_FAILED, out
    thresholds = json.loads(sql(db, "SELECT thresholds FROM suites")[0][0])
    assert thresholds == {"mean_score": 0.5, "pass_at_1": 0.9}  # the staging section over the seed's table
    assert sql(db, "SELECT verdict FROM test_results") == [("fail",)]

    (skill / "evals" / "config" / "thresholds.yaml").write_text("pass_rte: 0.5\nstagin: {pass_at_1: 0.9}\n")
    (skill / "evals" / "config" / "graders.yaml").write_text("exact: {type: code}\n")
    lines = refusals(capsys, tmp_path, skill)
    assert re.search(r"config/graders\.yaml:1: \(root\): config/graders\.yaml is not read", line_of(lines, "graders"))
    assert re.search(r"config/thresholds\.yaml:1: pass_rte: unknown threshold 'pass_rte'; did you mean 'pass_rate'\?",
                     line_of(lines, "pass_rte"))
    assert "unknown environment 'stagin'; did you mean 'staging'?" in line_of(lines, "thresholds.yaml:2:")


def test_layout_environment_sections_without_an_environment_are_refused(capsys, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {
        "evals/eval-suite.yaml": LAYOUT_SUITE.replace("  environment: staging\n", ""),
        "evals/capability/greet.yaml": GREET, "evals/config/thresholds.yaml": "staging: {pass_at_1: 0.9}\n"})
    (refusal,) = refusals(capsys, tmp_path, skill)
    assert "thresholds.yaml:1: staging: environment sections but the suite names no environment" in refusal


# ---- 11. misspelt threshold names ---------------------------------------------------------------


def test_misspelt_threshold_names_are_refused_at_validate(capsys, tmp_path: Path) -> None:
    suite = ("thresholds:\n  required_passrate: 0.8\n  pass_rte: 0.5\n  pass^3: 0.5\n"
             "tests:\n  - {id: a, input: hi, assert: [{type: contains, value: hi}]}\n")
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    lines = refusals(capsys, tmp_path, skill)
    assert len(lines) == 2  # pass^3 is a name the docs accept
    assert re.search(r"eval\.yaml:2: thresholds\.required_passrate: unknown threshold 'required_passrate'; "
                     r"did you mean 'required_pass_rate'\? \(expected a metric name: ", lines[0])
    assert re.search(r"eval\.yaml:3: thresholds\.pass_rte: unknown threshold 'pass_rte'; did you mean 'pass_rate'\?",
                     lines[1])
    harness = "eval_suite:\n  name: h\n  thresholds: {pass_at1: 0.8}\n  evals:\n    - {id: g, input: {content: hi}}\n"
    (skill / "eval.yaml").write_text(harness)
    assert "eval_suite.thresholds.pass_at1: unknown threshold 'pass_at1'; did you mean 'pass_at_1'?" in \
        line_of(refusals(capsys, tmp_path, skill), "pass_at1")


# ---- 12. judge scripts: missing customScript, TypeScript without a runtime ---------------------


def test_missing_custom_script_is_refused_at_validate(capsys, models: Models, tmp_path: Path) -> None:
    case = {"id": "tc-001", "name": "c", "input": {"prompt": "alpha"},
            "expected": {"customScript": "judges/check.py"}, "evaluation": {"strategy": "custom"}}
    skill = make_skill(tmp_path, {"eval/tests.json": suite_json(testCases=[case])})
    (refusal,) = refusals(capsys, tmp_path, skill)
    assert re.search(r"eval/tests\.json:\d+: testCases\[0\]\.expected\.customScript: judge script judges/check\.py "
                     r"not found", refusal)
    (skill / "eval" / "judges").mkdir()
    (skill / "eval" / "judges" / "check.py").write_text(
        "import json, sys\nout = json.load(sys.stdin)['output']\nprint(json.dumps({'score': float(out == 'alpha')}))\n")
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("code_judge", True)]


TS_SUITE = "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: code_judge\n        script: ./check.ts\n"
TS_JUDGE = "const verdict: { score: number } = { score: 1 };\nconsole.log(JSON.stringify(verdict));\n"


def test_typescript_judge_without_a_runtime_is_refused_naming_it(capsys, models: Models, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": TS_SUITE, "check.ts": TS_JUDGE})
    monkeypatch.setenv("PATH", str(tmp_path / "no-node-here"))  # no node, so nothing strips the types
    node_version.cache_clear()
    try:
        (refusal,) = refusals(capsys, tmp_path, skill)
    finally:
        node_version.cache_clear()
    assert re.search(r"eval\.yaml:6: tests\[0\]\.assert\[0\]\.script: no TypeScript runtime to run a \.ts judge "
                     r"\(no node on PATH\) \(expected node 22\.6 or later \(it strips the types\), or a `command` "
                     r"naming your TypeScript runtime, e\.g\. \[bun, run, check\.ts\]\)$", refusal)


def test_typescript_judge_runs_where_node_strips_types(capsys, models: Models, tmp_path: Path) -> None:
    """On node 22.6+ the judge is graded like a JavaScript one; on an older node (this is the
    case with node 20) `validate` names the version that cannot."""
    skill = make_skill(tmp_path, {"eval.yaml": TS_SUITE, "check.ts": TS_JUDGE})
    if typescript_runner(".ts") is None:
        (refusal,) = refusals(capsys, tmp_path, skill)
        assert re.search(r"no TypeScript runtime to run a \.ts judge \(node \d+\.\d+ does not strip types\)", refusal)
        return
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("code_judge", True)]
