"""The graders added for promptfoo's vocabulary, checked against promptfoo's own definitions
(src/assertions/*.ts and site/docs/configuration/expected-outputs): values worked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import assertion_from_raw, grade_output
from eval_pipelines.grading.graders._text_metrics import bleu, levenshtein, rouge_n
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.models import Message, TestCase, ToolSpec

WEATHER = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"location": {"type": "string"}},
                                                   "required": ["location"]})


def grade(raw: dict, output: str, *, tools: list[ToolSpec] | None = None, suite_dir: Path | None = None,
          variables: dict | None = None):
    case = TestCase(id="t", input=[Message(content="question")], tools=tools or [],
                    metadata={"vars": variables or {}})
    return grade_output(assertion_from_raw(raw), GradeInput(case=case, output=output, suite_dir=suite_dir))


def test_levenshtein_passes_within_the_threshold() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert (grade({"type": "levenshtein", "value": "sitting"}, "kitten").passed,
            grade({"type": "levenshtein", "value": "sitting", "threshold": 2}, "kitten").passed) == (True, False)
    assert grade({"type": "levenshtein", "value": "sitting"}, "kitten").details["distance"] == 3


def test_rouge_n_is_unigram_recall_of_the_reference() -> None:
    assert rouge_n("the cat sat", "the cat sat on the mat") == pytest.approx(3 / 6)
    g = grade({"type": "rouge_n", "value": "the cat sat on the mat"}, "the cat sat")
    assert g.details["rouge"] == pytest.approx(0.5) and not g.passed  # below promptfoo's 0.75
    g = grade({"type": "rouge_n", "value": "the cat sat on the mat", "threshold": 0.5}, "the cat sat")
    assert g.passed and g.score == pytest.approx(0.5)  # the recall itself (issue 30)
    assert g.calibrated_score == pytest.approx(0.8)  # exactly at the threshold: the pass mark


def test_bleu_matches_promptfoos_computation() -> None:
    assert bleu("The cat sat on the mat", ["the cat sat on the mat"]) == pytest.approx(1.0)
    # precisions 5/6, 3/5, 1/4, 0 (smoothed to 1e-7); equal lengths: no brevity penalty
    expected = math.exp(0.25 * (math.log(5 / 6) + math.log(3 / 5) + math.log(1 / 4) + math.log(1e-7)))
    assert bleu("the cat is on the mat", ["the cat sat on the mat"]) == pytest.approx(expected)
    # matches count against the best single reference; the brevity penalty uses the reference
    # closest in length ("a dog": 2 words, so none here); no trigrams: 1e-7 twice
    assert bleu("the cat", ["a dog", "the cat sat"]) == pytest.approx(math.exp(0.25 * 2 * math.log(1e-7)))
    assert bleu("the cat", ["the cat sat"]) == pytest.approx(math.exp(1 - 3 / 2) * math.exp(0.5 * math.log(1e-7)))
    assert grade({"type": "bleu", "value": "x y"}, "").status == "error"


def test_contains_json_finds_json_inside_prose() -> None:
    assert grade({"type": "contains_json"}, 'Sure: {"a": 1} done').passed
    assert not grade({"type": "contains_json"}, "no json here {").passed
    schema = {"type": "object", "required": ["b"]}
    assert not grade({"type": "contains_json", "value": schema}, 'x {"a": 1} y').passed
    assert grade({"type": "contains_json", "value": schema}, 'x {"a": 1} [1] {"b": 2}').passed


def test_openai_tools_call_checks_names_and_arguments() -> None:
    call = '[{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"location\\": \\"Boston\\"}"}}]'
    assert grade({"type": "openai_tools_call"}, call, tools=[WEATHER]).passed
    assert not grade({"type": "openai_tools_call"}, call.replace("location", "city"), tools=[WEATHER]).passed
    assert not grade({"type": "openai_tools_call"}, call.replace("get_weather", "delete"), tools=[WEATHER]).passed
    assert not grade({"type": "openai_tools_call"}, "It is sunny.", tools=[WEATHER]).passed
    assert grade({"type": "openai_tools_call"}, call).status == "error"  # no tools offered


@pytest.mark.parametrize(("raw", "output", "passed", "score"), [
    ({"type": "javascript", "value": "output.length > 2"}, "abc", True, 1.0),
    ({"type": "javascript", "value": "output.length > 2"}, "ab", False, 0.0),
    ({"type": "javascript", "value": "const n = output.length; n === 3;"}, "abc", True, 1.0),
    ({"type": "javascript", "value": "0.3"}, "x", True, None),  # a number above 0 passes without threshold
    ({"type": "javascript", "value": "0.3", "threshold": 0.5}, "x", False, None),
    ({"type": "javascript", "value": "({pass: false, score: 0.9, reason: 'nope'})"}, "x", False, 0.0),
    ({"type": "javascript", "value": "context.vars.city === 'Oslo' && output === 'Oslo'"}, "Oslo", True, 1.0),
    ({"type": "python", "value": "len(output) == 3"}, "abc", True, 1.0),
    ({"type": "python", "value": "n = len(output)\nreturn n / 10"}, "abcd", True, None),
    ({"type": "python", "value": "0.4", "threshold": 0.5}, "x", False, None),
])
def test_script_assertions_read_results_as_promptfoo(raw: dict, output: str, passed: bool, score: float | None) -> None:
    g = grade(raw, output, variables={"city": "Oslo"})
    assert g.status == "graded", g.reason
    assert g.passed == passed
    if score is not None:
        assert g.score == score


def test_script_assertion_files_and_errors(tmp_path: Path) -> None:
    (tmp_path / "check.js").write_text("module.exports = (output, context) => output.startsWith('A');\n")
    (tmp_path / "check.py").write_text("def get_assert(output, context):\n    return {'pass': True, 'score': 1,"
                                       " 'reason': 'ok ' + output}\n")
    assert grade({"type": "javascript", "value": "file://check.js"}, "Abc", suite_dir=tmp_path).passed
    g = grade({"type": "python", "value": "file://check.py"}, "xyz", suite_dir=tmp_path)
    assert g.passed and g.reason == "ok xyz"
    broken = grade({"type": "javascript", "value": "output.nope()"}, "x")
    # promptfoo's handlers catch what the code throws and fail the assertion (`pass: false, score: 0`,
    # "Custom function threw error: ...", "Python code execution failed: ..."): a verdict, not an
    # error, with the thrown error's own message (not a stack's tail)
    assert (broken.status, broken.passed, broken.score) == ("graded", False, 0.0)
    assert broken.reason == "javascript assertion threw TypeError: output.nope is not a function"
    syntax = grade({"type": "python", "value": "1 if output == 'it's' else 0"}, "x")
    assert (syntax.status, syntax.passed) == ("graded", False)
    assert syntax.reason.startswith("python assertion threw SyntaxError: ")
    assert "(line 1: return 1 if output == 'it's' else 0)" in syntax.reason
    # and they do so without looking at `inverse`: `not-javascript` whose code throws fails too
    for type_, code in (("javascript", "JSON.parse(output).ok"), ("python", "json.loads(output)['ok']")):
        inverted = grade({"type": type_, "value": code, "negate": True}, "not json")
        assert (inverted.status, inverted.passed, inverted.score) == ("graded", False, 0.0), inverted
        assert not inverted.reason.startswith("negated")
        assert grade({"type": type_, "value": code, "negate": True}, '{"ok": false}').passed  # no throw: inverted
    odd = grade({"type": "javascript", "value": "'text'", "negate": True}, "x")  # neither bool, number nor result
    assert (odd.status, odd.passed) == ("graded", False) and "not a boolean, number" in odd.reason


def test_transforms_rewrite_the_output_before_the_nested_assertion(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("""
prompts: ["{{ q }}"]
providers: [echo]
tests:
  - vars: {q: x}
    options: {transform: JSON.parse(output)}
    assert:
      - type: javascript
        value: output.color === 'red'
      - type: not-equals
        value: '{"color":"blue"}'
        transform: "JSON.stringify({color: output.color})"
        metric: not-blue
""")
    suite, _ = load_suite(config)
    case = suite.tests[0]
    assert [a.type for a in case.assertions] == ["transformed", "transformed"]
    assert case.assertions[1].name == "not-blue" and case.assertions[1].config["assert"]["negate"] is True
    red = GradeInput(case=case, output='{"color": "red"}', suite_dir=tmp_path)
    blue = GradeInput(case=case, output='{"color": "blue"}', suite_dir=tmp_path)
    assert [grade_output(a, red, i).passed for i, a in enumerate(case.assertions)] == [True, True]
    assert [grade_output(a, blue, i).passed for i, a in enumerate(case.assertions)] == [False, False]
    failed = grade_output(case.assertions[0], GradeInput(case=case, output="not json", suite_dir=tmp_path))
    assert failed.status == "error" and "transform failed" in failed.reason


WEATHER_FUNCTIONS = [{"name": "get_current_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"},
                                     "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["location"]}}]


def call_of(name: str, arguments: object) -> str:
    return json.dumps({"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)})


def test_openai_function_call_checks_the_call_against_the_functions() -> None:
    # promptfoo's validateFunctionCall (src/providers/openai/util.ts): {name, arguments: JSON text},
    # the named function's `parameters` validate the arguments; an unknown name fails.
    check = {"type": "openai_function_call", "functions": WEATHER_FUNCTIONS}
    call = call_of("get_current_weather", {"location": "Boston, MA"})
    assert grade(check, call).passed
    assert grade(check, '{"function_call": ' + call + '}').passed
    assert not grade(check, call_of("get_current_weather", {"location": "Boston", "unit": "kelvin"})).passed
    unknown = grade(check, call_of("get_time", {"location": "Boston, MA"}))
    assert not unknown.passed and "no function with that name" in unknown.reason
    assert not grade(check, json.dumps({"name": "get_current_weather", "arguments": {"location": "B"}})).passed
    assert not grade(check, call_of("get_current_weather", "{not json")).passed
    assert not grade(check, "It is sunny in Boston.").passed
    assert not grade({"type": "openai_function_call"}, call).passed  # no functions: no such function
    assert grade({**check, "negate": True}, "It is sunny.").passed


def test_inline_python_is_built_as_promptfoos_build_python_script() -> None:
    """promptfoo (src/assertions/python.ts): a value with a line break is the function body as
    written, indented like its first indented line, so a YAML block (`value: |`) holding one
    expression returns None and fails; one line is `return <value>`; `json` is imported."""
    assert grade({"type": "python", "value": "json.loads(output)['n'] > 1"}, '{"n": 2}').passed
    block = grade({"type": "python", "value": "len(output) == 1\n"}, "x")
    assert (block.status, block.passed) == ("graded", False) and "NoneType" in block.reason
    assert grade({"type": "python", "value": "n = len(output)\nreturn n == 1\n"}, "x").passed
    tabs = "if output:\n\treturn output == 'x'\nreturn False"  # the body keeps its own indentation
    assert grade({"type": "python", "value": tabs}, "x").passed
    # a one-line `return` is `return return ...` there: a SyntaxError, so a failure
    assert not grade({"type": "python", "value": "return output == 'x'"}, "x").passed
