"""promptfoo configs using the response-field and metric assertion types, through the loader:
each maps onto our grader with promptfoo's defaults (src/assertions/*.ts), or fails in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect
from tests.support.promptfoo_run import run_config


def load(tmp_path: Path, asserts: str):
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['Say {{ word }}']\nproviders: [echo]\ntests:\n  - vars: {word: hello}\n    assert:\n" + asserts)
    return load_suite(tmp_path / "promptfooconfig.yaml")


def assertions(tmp_path: Path, asserts: str) -> list[tuple[str, bool, dict]]:
    suite, _ = load(tmp_path, asserts)
    return [(a.type, a.negate, a.config) for a in suite.tests[0].assertions]


def one_line_error(tmp_path: Path, asserts: str) -> str:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, asserts)
    text = str(caught.value)
    assert "Traceback" not in text
    return text.splitlines()[0]


def test_similar_metrics_map_onto_semantic_sim(tmp_path: Path) -> None:
    got = assertions(tmp_path, """
      - {type: similar:cosine, value: Say hello}
      - {type: similar:dot, value: Say hello, threshold: 0.9}
      - {type: not-similar:euclidean, value: 'Say {{ word }}'}
      - {type: similar:euclidean, value: Say hello, threshold: 1.2}
""")
    assert got == [
        ("semantic_sim", False, {"value": "Say hello", "threshold": 0.75, "metric": "cosine"}),
        ("semantic_sim", False, {"value": "Say hello", "threshold": 0.9, "metric": "dot"}),
        ("semantic_sim", True, {"value": "Say hello", "threshold": 0.75, "metric": "euclidean"}),
        ("semantic_sim", False, {"value": "Say hello", "threshold": 1.2, "metric": "euclidean"}),
    ]


def test_similar_takes_a_list_of_references(tmp_path: Path) -> None:
    got = assertions(tmp_path, "      - {type: similar, value: [Say hello, 'Hi {{ word }}']}\n"
                               "      - {type: not-similar:euclidean, value: [a, b], threshold: 0.4}\n")
    assert got == [("semantic_sim", False, {"value": ["Say hello", "Hi hello"], "threshold": 0.75}),
                   ("semantic_sim", True, {"value": ["a", "b"], "threshold": 0.4, "metric": "euclidean"})]
    assert "a file:// reference inside a `value` list is not read" in one_line_error(
        tmp_path, "      - {type: similar, value: [file://a.txt, b]}\n")


@pytest.mark.parametrize("asserts, message", [
    ("      - {type: similar:dot, value: x, threshold: 1.5}\n", "similar:dot: `threshold` above 1 is not supported"),
    ("      - {type: similar:euclidean, value: x, threshold: -1}\n", "`threshold` must be 0 or more"),
    ("      - {type: similar:cosine, value: {a: 1}}\n", "`value` must be text"),
    ("      - {type: similar:manhattan, value: x}\n", "'similar:manhattan' is not supported"),
])
def test_similar_metric_refusals(tmp_path: Path, asserts: str, message: str) -> None:
    assert message in one_line_error(tmp_path, asserts)


def test_finish_reason_maps_onto_its_grader(tmp_path: Path) -> None:
    got = assertions(tmp_path, "      - {type: finish-reason, value: stop}\n"
                               "      - {type: not-finish-reason, value: length}\n")
    assert got == [("finish_reason", False, {"value": "stop"}), ("finish_reason", True, {"value": "length"})]
    assert "finish-reason: `value` must be text" in one_line_error(
        tmp_path, "      - {type: finish-reason, value: [stop]}\n")
    assert "finish-reason: `value` is required" in one_line_error(tmp_path, "      - {type: finish-reason}\n")


def test_finish_reason_is_stored_and_graded_end_to_end(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    fake_openai.answers = {"Say hello": "hello",
                           "Say a long story": {"content": "Once upon a", "finish_reason": "length"}}
    body = ("prompts: ['Say {{ word }}']\n"
            "tests:\n"
            "  - vars: {word: hello}\n    assert: [{type: finish-reason, value: stop}]\n"
            "  - vars: {word: a long story}\n    assert: [{type: finish-reason, value: stop},"
            " {type: not-finish-reason, value: stop}, {type: finish-reason, value: LENGTH}]\n")
    for run in range(2):  # the second run answers from the response cache: the reason comes with it
        db = run_config(tmp_path, fake_openai, monkeypatch, capsys, body)
        with connect(db) as con:
            rows = con.execute("SELECT test_id, finish_reason, cached FROM model_outputs ORDER BY test_id").fetchall()
            grades = con.execute("SELECT test_id, assertion_index, passed, reason FROM grades "
                                 "ORDER BY test_id, assertion_index").fetchall()
        assert rows == [("test-1", "stop", run == 1), ("test-2", "length", run == 1)]
        assert [g[:3] for g in grades] == [("test-1", 0, True), ("test-2", 0, False), ("test-2", 1, True),
                                           ("test-2", 2, True)]
        assert grades[1][3] == "Expected finish reason 'stop' but got 'length'"
    assert fake_openai.request_count == 2


def test_gleu_and_meteor_map_with_promptfoos_defaults(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, """
      - {type: gleu, value: hello world}
      - {type: not-gleu, value: [Hello world, Hi there world], threshold: 0.6}
      - {type: meteor, value: '{{ word }} world', alpha: 0.8, beta: 2, gamma: 0.4}
""")
    got = [(a.type, a.negate, a.config) for a in suite.tests[0].assertions]
    assert got == [
        ("gleu", False, {"value": "hello world", "threshold": 0.5}),
        ("gleu", True, {"value": ["Hello world", "Hi there world"], "threshold": 0.6}),
        ("meteor", False, {"value": "hello world", "threshold": 0.5, "alpha": 0.8, "beta": 2, "gamma": 0.4}),
    ]
    assert [w for w in warnings if "assert.2: meteor is scored from exact and Porter-stem" in w]


@pytest.mark.parametrize("asserts, message", [
    ("      - {type: gleu, value: 3}\n", "gleu: `value` must be a string or a non-empty list of strings"),
    ("      - {type: meteor, value: [a, 1]}\n", "meteor: `value` must be a string or a non-empty list"),
    ("      - {type: meteor, value: x, alpha: high}\n", "meteor: `alpha` must be a number"),
])
def test_gleu_and_meteor_refusals(tmp_path: Path, asserts: str, message: str) -> None:
    assert message in one_line_error(tmp_path, asserts)


def test_tool_call_f1_and_trajectory_types_map_onto_their_graders(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, """
      - {type: tool-call-f1, value: 'search, fetch '}
      - {type: not-tool-call-f1, value: [search], threshold: 0.5}
      - type: trajectory:step-count
        value: {type: command, pattern: '*task.md*', min: 1}
      - type: trajectory:step-count
        value: {name: 'search_*', max: 3}
      - {type: trajectory:goal-success, value: 'Find the order status'}
      - {type: trajectory:goal-success, value: {goal: ' Ship it '}, threshold: 0.7}
""")
    got = [(a.type, a.negate, a.config) for a in suite.tests[0].assertions]
    assert got == [
        ("tool_call_f1", False, {"value": ["search", "fetch"], "threshold": 1.0}),  # toolCallF1.ts default
        ("tool_call_f1", True, {"value": ["search"], "threshold": 0.5}),
        ("trajectory_step_count", False, {"step_type": "command", "pattern": "*task.md*", "min": 1}),
        ("trajectory_step_count", False, {"pattern": "search_*", "max": 3}),
        ("trajectory_goal_success", False, {"goal": "Find the order status"}),
        ("trajectory_goal_success", False, {"goal": "Ship it", "threshold": 0.7}),
    ]
    without_type = [w for w in warnings if "step-count without `type` counts the run's recorded tool calls" in w]
    assert len(without_type) == 1 and "assert.3" in without_type[0]


@pytest.mark.parametrize("asserts, message", [
    ("      - {type: tool-call-f1, value: ' , '}\n", "tool-call-f1: `value` must name at least one expected tool"),
    ("      - {type: tool-call-f1, value: {a: 1}}\n", "must be a list of tool names or a comma-separated string"),
    ("      - {type: trajectory:step-count, value: {type: thought, min: 4, max: 4}}\n",
     "`value.type` thought is not a step type (command, message, reasoning, search, span, tool)"),
    ("      - {type: trajectory:step-count, value: {type: tool}}\n", "`value` must include `min` or `max`"),
    ("      - {type: trajectory:step-count, value: {type: tool, min: 1.5}}\n", "`value.min` must be a whole number"),
    ("      - {type: trajectory:step-count, value: {kind: tool, min: 1}}\n", "unknown field(s) kind"),
    ("      - {type: trajectory:goal-success, value: {aim: x}}\n", "`value` must be the goal"),
    ("      - {type: trajectory:step-count, value: {pattern: a, name: b, min: 1}}\n", "both `pattern` and `name`"),
])
def test_tool_call_f1_and_trajectory_refusals(tmp_path: Path, asserts: str, message: str) -> None:
    assert message in one_line_error(tmp_path, asserts)


def test_perplexity_types_map_and_refuse(tmp_path: Path) -> None:
    got = assertions(tmp_path, "      - {type: perplexity, threshold: 1.5}\n      - {type: perplexity-score}\n"
                               "      - {type: not-perplexity-score, threshold: 0.5}\n")
    assert got == [("perplexity", False, {"threshold": 1.5}), ("perplexity_score", False, {}),
                   ("perplexity_score", True, {"threshold": 0.5})]
    assert "not-perplexity: `not-` without `threshold` always passes in promptfoo" in one_line_error(
        tmp_path, "      - {type: not-perplexity}\n")
    assert "perplexity: `threshold` must be a number" in one_line_error(
        tmp_path, "      - {type: perplexity, threshold: low}\n")


def test_perplexity_asks_for_logprobs_stores_and_grades_them(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    fake_openai.answers = {"Say hello": "hello there", "Say bye": "bye now"}
    fake_openai.token_logprobs = [-0.1, -0.5]  # perplexity e^0.3 ≈ 1.35, score 1 / (1 + e^0.3) ≈ 0.43
    body = ("prompts: ['Say {{ word }}']\n"
            "tests:\n"
            "  - vars: {word: hello}\n    assert: [{type: perplexity, threshold: 1.5},"
            " {type: perplexity-score, threshold: 0.5}, {type: not-perplexity-score, threshold: 0.5}]\n"
            "  - vars: {word: bye}\n    assert: [{type: contains, value: bye}]\n")
    for run in range(2):  # the second run answers from the response cache, logprobs included
        db = run_config(tmp_path, fake_openai, monkeypatch, capsys, body)
        with connect(db) as con:
            rows = con.execute("SELECT test_id, logprobs, cached FROM model_outputs ORDER BY test_id").fetchall()
            grades = con.execute("SELECT assertion_type, passed FROM grades WHERE test_id = 'test-1' "
                                 "ORDER BY assertion_index").fetchall()
        assert [(t, None if v is None else json.loads(v), c) for t, v, c in rows] == [
            ("test-1", [-0.1, -0.5], run == 1), ("test-2", None, run == 1)]
        assert grades == [("perplexity", True), ("perplexity_score", False), ("perplexity_score", True)]
    asked = {body["messages"][-1]["content"]: body.get("logprobs") for body in fake_openai.requests}
    assert asked == {"Say hello": True, "Say bye": None}  # asked only where a perplexity assertion reads them
    assert fake_openai.request_count == 2


def test_tool_used_with_a_pattern_and_bounds_counts_tool_steps(tmp_path: Path) -> None:
    # trajectory.ts handleTrajectoryToolUsed, object form: matching tool steps within min (default 1)..max;
    # the values are integration-opentelemetry's trajectory example.
    import asyncio

    from eval_pipelines.grading.base import GradeInput
    from eval_pipelines.grading.dispatch import agrade_output

    suite, _ = load(tmp_path, "      - {type: trajectory:tool-used, value: {pattern: 'search_*', min: 3, max: 3}}\n"
                              "      - {type: not-trajectory:tool-used, value: {name: delete_corpus}}\n"
                              "      - {type: trajectory:tool-used, value: {pattern: 'compose_*'}}\n")
    case = suite.tests[0]
    assert [(a.type, a.negate, a.config) for a in case.assertions] == [
        ("trajectory_step_count", False, {"step_type": "tool", "pattern": "search_*", "min": 3, "max": 3}),
        ("tool_trajectory", True, {"mode": "any_order", "expected": [{"tool": "delete_corpus"}]}),
        ("trajectory_step_count", False, {"step_type": "tool", "pattern": "compose_*", "min": 1})]
    calls = [{"tool": t, "args": {}} for t in ("search_corpus", "search_web", "search_corpus", "compose_answer")]
    grades = [asyncio.run(agrade_output(a, GradeInput(case=case, output="", trace=calls))) for a in case.assertions]
    assert [g.passed for g in grades] == [True, True, True]
    assert not asyncio.run(agrade_output(case.assertions[0], GradeInput(case=case, output="", trace=calls[:2]))).passed
    assert "unknown field(s) args" in one_line_error(
        tmp_path, "      - {type: trajectory:tool-used, value: {pattern: 'a*', args: {}}}\n")
