"""Regex and template safety (issue #9).

* Suite-supplied patterns with catastrophic backtracking, run against a long
  model output, end as an ``error`` grade within a bound (the ``regex`` package's
  match timeout) instead of hanging the run.
* The project's own patterns that read model output (code fences, the
  ``{{any_email}}`` placeholder, ``def`` search) stay fast on hostile outputs.
* ``{{variable}}`` (seed 000 prompts), ``{name}`` (judge prompts) and
  ``{{any_*}}`` (comparison placeholders) are plain text replacement: nothing
  in a template or a value is evaluated, looked up as an attribute, or
  expanded twice.

The bounds are generous (this is about not hanging, not about speed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from eval_pipelines.grading.graders import comparison, function_output, text
from eval_pipelines.grading.graders._judging import render
from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.models import Assertion, Message, TestCase
from eval_pipelines.formats.skill_tests.loader import substitute

pytestmark = pytest.mark.timeout(120)
LONG = "a" * 100_000 + "!"
# "Bounded, not hung": a catastrophic pattern left to run takes hours on LONG, so a minute
# tells the two apart even on a loaded CI machine (an idle one needs about 0.5-2 s). What
# stopped it is asserted from the grade's reason, not from the clock.
HANG_BOUND_S = 60
EVIL = ["(a+)+$", "^(a|a)*$", "^(\\w+\\s?)*$", "(a|aa)+$", "(.*a){25}$"]
MARKER = Path("/tmp/eval-pipelines-template-executed")


def regex_grade(pattern: str, output: str, **config: object):
    case = TestCase(id="t", input=[Message(content="q")])
    return grade_output(Assertion(type="regex", config={"value": pattern, **config}), GradeInput(case=case, output=output))


@pytest.mark.parametrize("pattern", EVIL)
def test_catastrophic_pattern_ends_as_an_error_grade_within_a_bound(pattern: str) -> None:
    started = time.perf_counter()
    grade = regex_grade(pattern, LONG, timeout_s=0.5)
    elapsed = time.perf_counter() - started
    assert elapsed < HANG_BOUND_S, elapsed
    if grade.status == "error":  # it backtracked: stopped at the timeout, with a reason
        assert "catastrophic backtracking" in grade.reason and not grade.passed
    else:  # the engine found the answer quickly
        assert grade.status == "graded"
    print(f"\nFIGURES regex {pattern!r} on {len(LONG)} chars: {grade.status} in {elapsed:.2f} s")


def test_the_default_timeout_applies_without_configuration() -> None:
    started = time.perf_counter()
    grade = regex_grade("(a+)+$", LONG)
    elapsed = time.perf_counter() - started
    assert grade.status == "error" and "took longer than 2 s" in grade.reason
    assert elapsed < HANG_BOUND_S


def test_patterns_from_a_seed_000_suite_are_bounded_too(tmp_path: Path) -> None:
    suite_file = tmp_path / "tests.json"
    suite_file.write_text(json.dumps({"version": "2.0", "profile": "deterministic", "testCases": [{
        "id": "t1", "name": "t1", "description": "d", "input": {"prompt": "p"},
        "expected": {"patterns": ["(a+)+$"]}, "evaluation": {"strategy": "regex_match"}}]}))
    suite, _ = load_suite(suite_file)
    (assertion,) = suite.tests[0].assertions
    started = time.perf_counter()
    grade = grade_output(assertion, GradeInput(case=suite.tests[0], output=LONG))
    assert time.perf_counter() - started < HANG_BOUND_S
    assert grade.status == "error" and "catastrophic backtracking" in grade.reason, grade.reason


HOSTILE_OUTPUTS = {
    "code fences without newlines": lambda: function_output.fenced_blocks("```" + "x```" * 50_000),
    "function search over blank lines": lambda: function_output.extract_code("```python\n" + "\n" * 100_000 + "```",
                                                                             "f"),
    "email placeholder": lambda: comparison._PLACEHOLDERS["any_email"]("a@" + "a." * 100_000 + "@"),
    "json fence": lambda: text.parse_json_output("```json" + " \n" * 50_000, allow_fence=True),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_OUTPUTS))
def test_built_in_patterns_stay_fast_on_hostile_outputs(name: str) -> None:
    started = time.perf_counter()
    try:
        HOSTILE_OUTPUTS[name]()
    except ValueError:
        pass  # "not JSON" is a fine answer
    assert time.perf_counter() - started < HANG_BOUND_S, name


# ---- templates -------------------------------------------------------------------------------

INJECTIONS = [
    "{{ __import__('os').system('touch /tmp/eval-pipelines-template-executed') }}",
    "{{ self.__init__.__globals__ }}",
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ config.items() }}",
    "{{ 7*7 }}",
    "{% for x in range(3) %}{{x}}{% endfor %}",
    "{{name.__class__}}",
    "${7*7} #{7*7} <%= 7*7 %>",
]


@pytest.mark.parametrize("template", INJECTIONS)
def test_variable_templates_never_evaluate(template: str) -> None:
    MARKER.unlink(missing_ok=True)
    rendered = substitute(template, {"name": "Ada", "self": "x", "config": "y"})
    assert rendered == template  # only {{identifier}} is replaced; nothing else is touched
    assert "49" not in rendered and not MARKER.exists()


def test_values_are_inserted_once_and_not_looked_up_as_attributes() -> None:
    assert substitute("Hi {{name}}", {"name": "{{secret}}"}) == "Hi {{secret}}"  # not expanded again
    assert substitute("{{ name }} / {{missing}}", {"name": "Ada"}) == "Ada / {{missing}}"
    # A dotted name is a key like any other, never an attribute path.
    assert substitute("{{ name.upper }}", {"name": "ada"}) == "{{ name.upper }}"
    assert substitute("{{__class__}}", {}) == "{{__class__}}"


def test_judge_prompts_replace_known_names_once() -> None:
    values = {"output": "{input} {__class__} {output.__class__}", "input": "question"}
    rendered = render("Q: {input}\nA: {output}\n{output.__class__} {0} {input!r}", values)
    assert rendered == "Q: question\nA: {input} {__class__} {output.__class__}\n{output.__class__} {0} {input!r}"


def test_seed_000_prompt_with_an_injection_loads_as_literal_text(tmp_path: Path) -> None:
    MARKER.unlink(missing_ok=True)
    suite_file = tmp_path / "tests.json"
    prompt = "Say {{greeting}} to " + INJECTIONS[0]
    suite_file.write_text(json.dumps({"version": "2.0", "profile": "deterministic", "testCases": [{
        "id": "t1", "name": "t1", "description": "d",
        "input": {"prompt": prompt, "variables": {"greeting": "{{ __import__('os') }}"}},
        "expected": {"output": "x"}}]}))
    suite, _ = load_suite(suite_file)
    content = suite.tests[0].input[-1].content
    assert content == "Say {{ __import__('os') }} to " + INJECTIONS[0]
    assert not MARKER.exists()


def test_comparison_placeholders_are_names_not_code() -> None:
    case = TestCase(id="t", input=[Message(content="q")])
    expected = {"id": "{{any_uuid}}", "x": "{{ __import__('os').getcwd() }}"}
    grade = grade_output(Assertion(type="comparison", config={"expected": expected}),
                         GradeInput(case=case, output=json.dumps({"id": "not-a-uuid", "x": "/"})))
    assert not grade.passed and not MARKER.exists()
