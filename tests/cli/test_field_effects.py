"""Issue 16: every field a suite can hold shapes the stored rows, is refused, or is warned about.

Each test builds a small project (``targets.yaml`` pointing at the local fake
OpenAI server, one skill), runs ``eval-pipelines run`` through ``main([...])``
and reads the effect back from DuckDB, from the fake server's recorded
requests, or from the reports it wrote. ``tests/formats/test_field_contract.py``
names these tests as the evidence for each field.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import EXIT_INVALID, EXIT_OK, main
from tests.support.fake_openai import FakeOpenAIServer, last_user_message
from tests.support.field_projects import (
    ALT_TARGET, HARNESS_TRIALS, PER_TEST_EXECUTION, PROJECT_TARGETS, REPORTING, Models, make_skill, sql,
    suite_json,
)

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="`node` is not on PATH")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[Models]:
    with FakeOpenAIServer(latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fields")
        yield Models(server)


def run(capsys: pytest.CaptureFixture[str], root: Path, skill: Path, *extra: str) -> tuple[int, str, Path]:
    db = root / "results.duckdb"
    capsys.readouterr()
    code = main(["--root", str(root), "run", str(skill), "--db", str(db), *extra])
    out, err = capsys.readouterr()
    return code, out + err, db


def warnings_of(db: Path) -> list[str]:
    (raw,) = sql(db, "SELECT warnings FROM suites")[0]
    return json.loads(raw)


# ---- 1. eval.yaml per-test execution ---------------------------------------------------------


def test_eval_yaml_per_test_trials_cache_and_evaluators(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": PER_TEST_EXECUTION, "targets.yaml": ALT_TARGET})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    per_case = dict(sql(db, "SELECT test_id, count(*) FROM model_outputs GROUP BY test_id"))
    # 1 trial on 2 targets for `once` and `fresh`, the suite's 3 on 2 targets for the others.
    assert per_case == {"once": 2, "thrice": 6, "own-evaluator": 6, "fresh": 2}
    assert sql(db, "SELECT DISTINCT assertion_type, verdict FROM grades JOIN test_results "
                   "USING (eval_date, skill_version, test_id, target, trial) WHERE test_id = 'own-evaluator'") \
        == [("equals", "pass")]
    assert any("execution.evaluators is deprecated" in w for w in warnings_of(db))

    # Run again: every call comes from the cache except the test that said `cache: false`.
    before = len(models.chat_requests())
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert [r["messages"][-1]["content"] for r in models.chat_requests()[before:]] == ["five", "five"]
    assert dict(sql(db, "SELECT test_id, bool_and(cached) FROM model_outputs GROUP BY test_id")) == {
        "once": True, "thrice": True, "own-evaluator": True, "fresh": False}


# ---- 2. trials for harness and tests.json ---------------------------------------------------


def test_harness_trials_feed_pass_hat_k_gates(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": HARNESS_TRIALS})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out  # the pass_hat_3 gate resolves (and passes) instead of failing on None
    assert sql(db, "SELECT test_id, count(*) FROM model_outputs GROUP BY ALL") == [("greet", 3)]
    assert sql(db, "SELECT trials FROM suites") == [(3,)]
    metrics = dict(sql(db, "SELECT metric, value FROM metrics WHERE target = '*'"))
    assert metrics["pass_hat_3"] == 1.0 and metrics["pass_at_3"] == 1.0
    # The environment's table gives pass@k and pass^k for the suite's k, not only pass@1.
    thresholds = json.loads(sql(db, "SELECT thresholds FROM suites")[0][0])
    assert thresholds == {"pass_at_1": 0.8, "pass_at_3": 0.95, "pass_hat_3": 0.5}


def test_harness_gate_without_trials_runs_k_trials_and_too_few_is_refused(capsys, models: Models,
                                                                          tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": HARNESS_TRIALS.replace("  config: {trials: 3}\n", "")})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT count(*) FROM model_outputs") == [(3,)]
    (skill / "eval.yaml").write_text(HARNESS_TRIALS.replace("{trials: 3}", "{trials: 2}"))
    code, out, _ = run(capsys, tmp_path, skill)
    assert code == EXIT_INVALID
    assert "eval_suite.config.trials: 2 trial(s) cannot compute a k=3 gate" in out


def test_tests_json_settings_trials(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval/tests.json": suite_json(settings={"trials": 2})})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert dict(sql(db, "SELECT test_id, count(*) FROM model_outputs GROUP BY test_id")) == {
        "tc-001": 2, "tc-002": 2, "tc-003": 2}
    assert "pass_hat_2" in dict(sql(db, "SELECT metric, value FROM metrics WHERE target = '*'"))


# ---- 3. function_output executor: javascript -------------------------------------------------


JS_FACTORIAL = "```javascript\nfunction factorial(n) { return n <= 1 ? 1 : n * factorial(n - 1); }\n```"


@needs_node
def test_javascript_function_output_in_harness_and_eval_yaml(capsys, models: Models, tmp_path: Path) -> None:
    models.replies["Write factorial in JavaScript"] = JS_FACTORIAL
    harness = """\
    eval_suite:
      name: js-suite
      evals:
        - id: js-harness
          input: {type: prompt, content: Write factorial in JavaScript}
          grader:
            type: code
            config:
              method: function_output
              executor: javascript
              function_name: factorial
              test_cases:
                - {args: [5], expected: 120}
                - {args: [0], expected: 1}
    """
    skill = make_skill(tmp_path, {"eval.yaml": harness})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    (details,) = sql(db, "SELECT details FROM grades WHERE assertion_type = 'function_output'")[0]
    assert json.loads(details)["executor"] == "javascript"
    assert sql(db, "SELECT score, passed FROM grades") == [(1.0, True)]

    eval_yaml = """\
    tests:
      - id: js-eval-yaml
        input: Write factorial in JavaScript
        assert:
          - type: function_output
            executor: javascript
            function_name: factorial
            test_cases: [{args: [4], expected: 24}]
    """
    other = make_skill(tmp_path / "second", {"eval.yaml": eval_yaml})
    code, out, db = run(capsys, tmp_path / "second", other)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT score, passed FROM grades") == [(1.0, True)]


# ---- 4. structural paths relative to the compared value --------------------------------------


def test_seed_structural_example_matches_relative_paths(capsys, models: Models, tmp_path: Path) -> None:
    seeds = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"
    grown = {"status": 200, "headers": {"content-type": "application/json"},
             "body": {"data": [{"id": 1}, {"id": 2}], "meta": {"page": 1, "per_page": 20, "total": 2}}}
    request = json.loads((seeds / "003_users_api_regression.json").read_text())["test_case"]["input"]
    models.replies[json.dumps(request, indent=2)] = json.dumps(grown)
    skill = make_skill(tmp_path, {"eval.yaml": (seeds / "003_users_api_regression.json").read_text()})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    # `require_keys: [data, meta.page]` and `ignore_values: [data.*]` are written relative to `body`;
    # the list under data.* grew from 0 to 2 items, which its ignored values allow.
    assert sql(db, "SELECT assertion_type, passed, reason FROM grades") == [
        ("structural", True, "structure matches the baseline")]


# ---- 5. failFast, retryCount, retryFailed ------------------------------------------------------


def test_fail_fast_stops_after_a_failing_case_and_the_rest_is_not_run(capsys, models: Models,
                                                                      tmp_path: Path) -> None:
    models.replies["beta"] = "wrong"
    skill = make_skill(tmp_path, {"eval/tests.json": suite_json(
        settings={"failFast": True, "parallelExecution": False})})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT test_id, status, verdict FROM test_results ORDER BY test_id") == [
        ("tc-001", "graded", "pass"), ("tc-002", "graded", "fail"), ("tc-003", "not_run", None)]
    assert [r["messages"][-1]["content"] for r in models.chat_requests()] == ["alpha", "beta"]
    assert sql(db, "SELECT attempts, error FROM model_outputs WHERE test_id = 'tc-003'") == [
        (0, "not run: failFast stopped the suite after an earlier failure")]
    metrics = dict(sql(db, "SELECT metric, value FROM metrics WHERE target = '*'"))
    assert metrics["errors"] == 0 and metrics["pass_rate"] == 0.5  # not run counts as neither


def test_retry_count_and_retry_failed_rerun_failing_cases(capsys, models: Models, tmp_path: Path) -> None:
    models.replies["alpha"] = ["wrong", "still wrong", "alpha"]  # passes on its third attempt
    models.replies["beta"] = "wrong"  # never passes
    data = json.loads(suite_json(settings={"retryFailed": True}))
    data["testCases"][0]["evaluation"] = {"retryCount": 2}
    skill = make_skill(tmp_path, {"eval/tests.json": json.dumps(data)})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT test_id, attempts, output FROM model_outputs ORDER BY test_id") == [
        ("tc-001", 3, "alpha"), ("tc-002", 2, "wrong"), ("tc-003", 1, "gamma")]
    assert sql(db, "SELECT test_id, verdict FROM test_results ORDER BY test_id") == [
        ("tc-001", "pass"), ("tc-002", "fail"), ("tc-003", "pass")]
    sent = [r["messages"][-1]["content"] for r in models.chat_requests()]
    assert sent.count("alpha") == 3 and sent.count("beta") == 2 and sent.count("gamma") == 1


def test_eval_yaml_settings_fail_fast_and_rerun_failed(capsys, models: Models, tmp_path: Path) -> None:
    models.replies["one"] = ["wrong", "one"]  # passes when re-run
    models.replies["two"] = "wrong"  # fails twice: the suite stops there
    suite = """\
    settings: {fail_fast: true, rerun_failed: 1, max_concurrency: 1}
    tests:
      - {id: a, input: one, assert: [{type: equals, value: one}]}
      - {id: b, input: two, assert: [{type: equals, value: two}]}
      - {id: c, input: three, assert: [{type: equals, value: three}]}
    """
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT test_id, attempts, status, verdict FROM model_outputs JOIN test_results "
                   "USING (eval_date, skill_version, test_id, target, trial) ORDER BY 1") == [
        ("a", 2, "graded", "pass"), ("b", 2, "graded", "fail"), ("c", 0, "not_run", None)]


def test_rerun_cases_ask_the_judge_once_per_attempt(capsys, models: Models, tmp_path: Path) -> None:
    """The model phase grades each attempt to decide on a re-run; the grades stage keeps those
    grades for the stored outputs instead of asking the judge a second time."""
    models.replies["one"] = ["wrong", "one"]  # fails, then passes when re-run
    suite = """\
    settings: {rerun_failed: 1, max_concurrency: 1}
    tests:
      - {id: a, input: one, criteria: Says one., assert: [{type: equals, value: one}, {type: llm_judge}]}
      - {id: b, input: two, criteria: Says two., assert: [{type: equals, value: two}, {type: llm_judge}]}
    """
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT test_id, attempts FROM model_outputs ORDER BY 1") == [("a", 2), ("b", 1)]
    judged = [last_user_message(r) for r in models.chat_requests(judge=True)]
    assert len(judged) == 3  # a's two attempts and b's one: none judged twice
    assert sum("wrong" in text for text in judged) == 1
    assert sql(db, "SELECT test_id, count(*), bool_and(status = 'graded') FROM grades GROUP BY 1 ORDER BY 1") == [
        ("a", 2, True), ("b", 2, True)]


HARNESS_EVAL_FILE = """\
schema_version: "1.0"
eval_type: capability
metadata: {id: strings, name: strings}
config: {timeout_seconds: 7, retries: 1, parallel: false, trials: 2}
test_cases:
  - id: up
    input: {type: prompt, content: shout}
    expected_output: {type: exact, value: SHOUT}
  - id: down
    input: {type: prompt, content: whisper}
    expected_output: {type: exact, value: whisper}
"""


def test_harness_eval_file_and_suite_config_shape_the_run(capsys, models: Models, tmp_path: Path) -> None:
    models.server.latency_s = 0.05
    models.replies["shout"] = ["shout", "SHOUT", "SHOUT"]  # trial 0 passes on its re-run
    suite = """\
    eval_suite:
      name: configured
      config: {max_workers: 4, parallel_execution: false, retry_failed: true, retry_count: 2}
      evals: [{$ref: strings.yaml}]
    """
    skill = make_skill(tmp_path, {"eval.yaml": suite, "strings.yaml": HARNESS_EVAL_FILE})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    # The file's trials (2 per case) and retries (1 re-run, over the suite's 2); no overlap.
    assert sql(db, "SELECT test_id, trial, attempts, verdict FROM model_outputs JOIN test_results "
                   "USING (eval_date, skill_version, test_id, target, trial) ORDER BY 1, 2") == [
        ("down", 0, 1, "pass"), ("down", 1, 1, "pass"), ("up", 0, 2, "pass"), ("up", 1, 1, "pass")]
    assert models.server.max_in_flight == 1
    (spec,) = sql(db, "SELECT spec FROM suites")[0]
    assert {c["id"]: c["timeout_ms"] for c in json.loads(spec)["tests"]} == {"up": 7000, "down": 7000}


def test_trials_strategy_decides_the_case_verdict(capsys, models: Models, tmp_path: Path) -> None:
    passed = {}
    for strategy in ("pass_at_k", "all"):
        models.replies["hi"] = ["hi", "no", "no"]  # one trial of three passes
        suite = (f"execution: {{trials: {{count: 3, strategy: {strategy}}}}}\n"
                 "tests:\n  - {id: a, input: hi, assert: [{type: equals, value: hi}]}\n")
        root = tmp_path / strategy
        skill = make_skill(root, {"eval.yaml": suite})
        code, out, db = run(capsys, root, skill, "--no-cache")
        assert code == EXIT_OK, out
        passed[strategy] = sql(db, "SELECT value FROM case_metrics WHERE metric = 'case_passed'")[0][0]
    assert passed == {"pass_at_k": 1.0, "all": 0.0}


def test_workspace_setup_and_teardown_environment(capsys, models: Models, tmp_path: Path) -> None:
    suite = """\
    workspace:
      setup: {script: [python, setup.py], environment: {GREETING: hello}}
      teardown: {script: [python, teardown.py], environment: {FAREWELL: bye}}
    tests:
      - {id: a, input: hi, assert: [{type: equals, value: hello}]}
    """
    files = {
        "eval.yaml": suite,
        "targets.yaml": "targets:\n  - {name: script, type: command, command: [python, answer.py]}\n",
        "setup.py": "import os, pathlib\npathlib.Path(os.environ['EVAL_WORKSPACE'], 'g.txt').write_text("
                    "os.environ['GREETING'])\n",
        "answer.py": "import os\nprint(os.environ['GREETING'])\n",
        "teardown.py": "import os, pathlib\npathlib.Path(os.environ['EVAL_WORKSPACE'], 'done.txt').write_text("
                       "os.environ['GREETING'] + ' ' + os.environ['FAREWELL'])\n",
    }
    skill = make_skill(tmp_path, files)
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT output, verdict FROM model_outputs JOIN test_results "
                   "USING (eval_date, skill_version, test_id, target, trial)") == [("hello", "pass")]
    (done,) = (tmp_path / ".data" / "workspaces").glob("*/fx@1.0.0/done.txt")
    assert done.read_text() == "hello bye"


# ---- 6. a skill's judge target is not a system under test --------------------------------------


def test_judge_in_skill_targets_is_not_evaluated(capsys, models: Models, tmp_path: Path) -> None:
    targets = PROJECT_TARGETS.replace("default", "sut") + PROJECT_TARGETS.replace("targets:\n", "").replace(
        "default", "judge").replace("gpt-test", "gpt-judge")
    suite = "tests:\n  - id: polite\n    input: say hi\n    criteria: The reply greets the user.\n"
    skill = make_skill(tmp_path, {"eval.yaml": suite, "targets.yaml": targets})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert sql(db, "SELECT DISTINCT target FROM model_outputs") == [("sut",)]
    assert [r["model"] for r in models.chat_requests()] == ["gpt-test"]
    assert [r["model"] for r in models.chat_requests(judge=True)] == ["gpt-judge"]


# ---- 7. seed 002 prompt fields ----------------------------------------------------------------


PROMPT = {
    "name": "pirate-helper",
    "content": "You help {{who}}.",
    "model": "gpt-prompt-model",
    "variables": {"who": "pirates"},
    "expectedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}},
    "evaluationMode": "llm",
    "evaluationCriteria": "Answers like a pirate.",
    "testCases": [{"id": "ahoy", "input": "Greet {{who}} at {{place}}", "variables": {"place": "sea"}}],
}


def test_prompt_mode_system_prompt_variables_model_and_schema(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"prompt.json": json.dumps(PROMPT)})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    (request,) = models.chat_requests()
    assert request["model"] == "gpt-prompt-model"
    assert request["messages"] == [{"role": "system", "content": "You help pirates."},
                                   {"role": "user", "content": "Greet pirates at sea"}]
    assert request["response_format"]["json_schema"]["schema"] == PROMPT["expectedSchema"]
    (judged,) = models.chat_requests(judge=True)
    prompt = last_user_message(judged)
    assert "You help pirates." in prompt and "Greet pirates at sea" in prompt  # the prompt as context
    assert judged["model"] == "gpt-test"  # the judge keeps its own model
    (messages,) = sql(db, "SELECT messages FROM test_cases")[0]
    assert json.loads(messages)[0] == {"role": "system", "content": "You help pirates."}
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("llm_judge", True)]


# ---- 8. reporting --------------------------------------------------------------------------


def test_reporting_output_dir_format_and_details(capsys, models: Models, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": REPORTING})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    written = sorted(p.name for p in (tmp_path / "eval-results").iterdir())
    assert written == ["fx-1.0.0.json", "fx-1.0.0.md"]  # no HTML: the suite asked for two formats
    assert f"Reports: {tmp_path / 'eval-results'}" in out
    assert not (tmp_path / "reports").exists()
    report = json.loads((tmp_path / "eval-results" / "fx-1.0.0.json").read_text())["eval_report"]
    assert report["results"] == [] and report["summary"]["passed"] == 1  # include_details: false
    assert "- [x]" not in (tmp_path / "eval-results" / "fx-1.0.0.md").read_text()
    (warning,) = warnings_of(db)
    assert warning.startswith("accepted, not used: eval_suite.reporting.notify_on_failure: nobody is notified")
    assert report["metadata"]["warnings"] == [warning]

    # `eval-pipelines report` without --format writes what the suite asks for, where it asks.
    shutil.rmtree(tmp_path / "eval-results")
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "report", "--skill", "fx", "--db", str(db)]) == EXIT_OK
    assert sorted(p.name for p in (tmp_path / "eval-results").iterdir()) == ["fx-1.0.0.json", "fx-1.0.0.md"]


def test_reporting_output_dir_outside_the_project_is_refused(capsys, tmp_path: Path) -> None:
    skill = make_skill(tmp_path, {"eval.yaml": REPORTING.replace("eval-results", "../elsewhere")})
    code, out, _ = run(capsys, tmp_path, skill)
    assert code == EXIT_INVALID
    (line,) = [x for x in out.splitlines() if "output_dir" in x]
    assert line.startswith(f"{skill / 'eval.yaml'}:5: eval_suite.reporting.output_dir: '../elsewhere' leaves")


# ---- 9. accepted-and-unused fields get a stored warning, shown in every report ------------------


def test_unused_fields_are_warned_in_suites_and_every_report(capsys, models: Models, tmp_path: Path) -> None:
    data = json.loads(suite_json())
    data["setup"] = {"dependencies": ["surely-not-a-real-package-4242"]}
    skill = make_skill(tmp_path, {"eval/tests.json": json.dumps(data)})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    (warning,) = warnings_of(db)
    assert warning.startswith("accepted, not used: setup.dependencies: dependencies are not installed")
    assert "warning: accepted, not used: setup.dependencies" in out  # and on standard error
    day = sql(db, "SELECT eval_date FROM suites")[0][0]
    folder = tmp_path / "reports" / day
    assert json.loads((folder / "fx-1.0.0.json").read_text())["eval_report"]["metadata"]["warnings"] == [warning]
    assert "accepted, not used: setup.dependencies" in (folder / "fx-1.0.0.md").read_text()
    assert "accepted, not used: setup.dependencies" in (folder / "fx-1.0.0.html").read_text()


def test_harness_config_keys_refused_or_warned(capsys, models: Models, tmp_path: Path) -> None:
    suite = HARNESS_TRIALS.replace("config: {trials: 3}", "config: {trials: 3, timeout_global: 3600}")
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert [w.split(":")[1].strip() for w in warnings_of(db)] == ["eval_suite.config.timeout_global"]
    (skill / "eval.yaml").write_text(HARNESS_TRIALS.replace("{trials: 3}", "{trials: 3, max_wrokers: 2}"))
    code, out, _ = run(capsys, tmp_path, skill)
    assert code == EXIT_INVALID
    assert "eval_suite.config.max_wrokers: unknown field 'max_wrokers'; did you mean 'max_workers'?" in out


def test_requires_and_sidecar_fields_are_warned(capsys, models: Models, tmp_path: Path) -> None:
    suite = """\
    name: sidecar
    description: d
    requires: {agentv: ">=0.6"}
    evaluator: llm_judge
    dataset: greetings
    workspace: {dependencies: [surely-not-a-real-package-4242]}
    tests:
      - id: a
        input: hi
        assert: [{type: contains, value: hi}]
    """
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert [w.split(":")[1].strip() for w in warnings_of(db)] == [
        "requires.agentv", "evaluator", "dataset", "workspace.dependencies"]


def test_parallel_execution_false_and_run_in_sequence_run_one_case_at_a_time(
        capsys, models: Models, tmp_path: Path) -> None:
    models.server.latency_s = 0.05  # long enough for concurrent calls to overlap
    for settings, groups in (({"parallelExecution": False}, None),
                             ({}, [{"name": "ordered", "testIds": ["tc-001", "tc-002"], "runInSequence": True}])):
        data = json.loads(suite_json(settings=settings))
        if groups:
            data["suites"] = groups
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        skill = make_skill(root, {"eval/tests.json": json.dumps(data)})
        models.server.max_in_flight = 0
        code, out, db = run(capsys, root, skill, "--no-cache")
        assert code == EXIT_OK, out
        assert models.server.max_in_flight == 1
        assert sql(db, "SELECT count(*) FROM model_outputs") == [(3,)]
    # maxConcurrentTests caps the overlap; without any of them, the same suite's calls overlap.
    for settings, most in (({"maxConcurrentTests": 2}, 2), ({}, 3)):
        root = tmp_path / f"parallel-{most}"
        skill = make_skill(root, {"eval/tests.json": suite_json(settings=settings)})
        models.server.max_in_flight = 0
        assert run(capsys, root, skill, "--no-cache")[0] == EXIT_OK
        assert 1 < models.server.max_in_flight <= most


def test_bare_dataset_validates_without_a_reference_cycle(capsys, tmp_path: Path) -> None:
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text('{"id": "a", "input": "hi", "assert": [{"type": "contains", "value": "hi"}]}\n')
    capsys.readouterr()
    assert main(["validate", "--as-suite", str(dataset)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.strip() == f"ok: {dataset}: eval-yaml: 1 tests" and "cycle" not in out


def test_eval_yaml_note_and_conversation_id_are_kept_with_the_case(capsys, models: Models,
                                                                   tmp_path: Path) -> None:
    suite = """\
    tests:
      - id: a
        input: hi
        note: checks the greeting
        conversation_id: thread-7
        assert: [{type: contains, value: hi}]
    """
    skill = make_skill(tmp_path, {"eval.yaml": suite})
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    (metadata,) = sql(db, "SELECT metadata FROM test_cases")[0]
    assert json.loads(metadata) == {"note": "checks the greeting", "conversation_id": "thread-7"}


# ---- 10. Markdown keeps the spaces around code spans ----------------------------------------------


def test_markdown_recommendation_keeps_spaces_around_code_spans(capsys, models: Models, tmp_path: Path) -> None:
    from eval_pipelines.reports.markdown import inline

    assert inline("Fix `contains` failures") == "Fix `contains` failures"
    assert inline("`a` and `b`") == "`a` and `b`"
    models.replies["hello"] = "bye"
    skill = make_skill(tmp_path, {"eval.yaml": "tests:\n  - id: a\n    input: hello\n"
                                                "    assert: [{type: contains, value: hello}]\n"})
    run(capsys, tmp_path, skill)
    day = sql(tmp_path / "results.duckdb", "SELECT eval_date FROM suites")[0][0]
    markdown = (tmp_path / "reports" / day / "fx-1.0.0.md").read_text()
    recommendations = markdown.split("### Recommendations", 1)[1]
    assert "`contains`" in recommendations
    assert "\\`" not in recommendations and not any(
        f"{c}`contains`" in recommendations for c in "abcdefghijklmnopqrstuvwxyz")


# ---- 11. validate . / run . inside a skill folder ----------------------------------------------------


def test_validate_and_run_dot_inside_a_skill_folder(capsys, models: Models, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    targets = PROJECT_TARGETS.replace("default", "own")
    skill = make_skill(tmp_path, {"eval.yaml": "tests:\n  - id: a\n    input: hi\n"
                                                "    assert: [{type: contains, value: hi}]\n",
                                  "targets.yaml": targets})
    (tmp_path / "targets.yaml").unlink()  # the skill folder is all there is
    monkeypatch.chdir(skill)
    capsys.readouterr()
    assert main(["validate", "."]) == EXIT_OK, capsys.readouterr()
    assert "ok: .: fx@1.0.0: 1 tests" in capsys.readouterr().out
    db = tmp_path / "dot.duckdb"
    assert main(["run", ".", "--db", str(db)]) == EXIT_OK, capsys.readouterr()
    assert sql(db, "SELECT target, verdict FROM test_results") == [("own", "pass")]
    # The run's own outputs stay out of the skill's content: a second run, with the default
    # database in the folder, sees the same package hash, and no reports/ appears in the skill.
    assert main(["run", "."]) == EXIT_OK, capsys.readouterr()
    assert main(["run", "."]) == EXIT_OK, capsys.readouterr()
    hashes = sql(skill / ".data" / "eval_pipelines.duckdb", "SELECT DISTINCT package_hash FROM suites")
    assert len(hashes) == 1 and sql(db, "SELECT package_hash FROM suites") == hashes
    assert not (skill / "reports").exists() and any((skill / ".data" / "reports").rglob("*.md"))
