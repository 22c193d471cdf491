"""Parameters of the promptfoo graders whose effect no other test showed (tests/formats/field_contract.yaml
names these): each test flips one parameter and shows the verdict change."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from eval_pipelines.grading.base import Grade, GradeInput
from eval_pipelines.grading.dispatch import assertion_from_raw, grade_output
from eval_pipelines.suite.models import Message, TestCase

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="`node` is not on PATH")


def grade(raw: dict[str, Any], output: str) -> Grade:
    case = TestCase(id="t", input=[Message(content="question")], metadata={"vars": {}})
    return grade_output(assertion_from_raw(raw), GradeInput(case=case, output=output))


def test_bleu_threshold_and_reference_decide_the_verdict() -> None:
    # precisions 6/7, 5/6, 4/5, 3/4 and no brevity penalty: BLEU about 0.80
    bleu = {"type": "bleu", "value": "the cat sat on the mat"}
    g = grade(bleu, "the cat sat on the mat today")
    assert g.passed and 0.75 < g.details["bleu"] < 0.85  # promptfoo's default threshold 0.5
    assert not grade({**bleu, "threshold": 0.9}, "the cat sat on the mat today").passed
    assert not grade({**bleu, "value": "a dog ran in the park"}, "the cat sat on the mat today").passed


def test_rouge_n_order_changes_the_recall() -> None:
    rouge = {"type": "rouge_n", "value": "the cat sat on the mat", "threshold": 0.45}
    unigrams = grade(rouge, "the cat sat")  # 3 of 6 reference words
    bigrams = grade({**rouge, "n": 2}, "the cat sat")  # 2 of 5 reference bigrams
    assert unigrams.details["rouge"] == pytest.approx(0.5) and unigrams.passed
    assert bigrams.details["rouge"] == pytest.approx(0.4) and not bigrams.passed


@pytest.mark.parametrize(("type_", "code"), [
    pytest.param("javascript", "output.length >= context.config.minimum", marks=needs_node),
    ("python", "len(output) >= context['config']['minimum']"),
])
def test_script_assertion_config_reaches_the_code(type_: str, code: str) -> None:
    assert grade({"type": type_, "value": code, "config": {"minimum": 4}}, "abcd").passed
    assert not grade({"type": type_, "value": code, "config": {"minimum": 5}}, "abcd").passed


@pytest.mark.parametrize(("type_", "code"), [
    pytest.param("javascript", "output.a === 1", marks=needs_node),
    ("python", "output['a'] == 1"),
])
def test_script_assertion_output_json_hands_the_code_parsed_output(type_: str, code: str) -> None:
    assert grade({"type": type_, "value": code, "output_json": True}, '{"a": 1}').passed
    as_text = grade({"type": type_, "value": code}, '{"a": 1}')  # the text has no key 'a'
    assert not as_text.passed


@pytest.mark.slow  # sandboxed subprocesses that wait
@pytest.mark.parametrize(("type_", "code"), [
    pytest.param("javascript", "new Promise((done) => setTimeout(() => done(true), 3000))", marks=needs_node),
    ("python", "import time\ntime.sleep(3)\nreturn True"),
])
def test_script_assertion_timeout_ms_ends_a_sleeper(type_: str, code: str) -> None:
    assert grade({"type": type_, "value": code, "timeout_ms": 60_000}, "x").passed
    cut = grade({"type": type_, "value": code, "timeout_ms": 1000}, "x")
    assert cut.status == "error" and "timed out" in cut.reason


@pytest.mark.slow  # sandboxed subprocesses
@pytest.mark.parametrize(("type_", "code"), [
    pytest.param("javascript", "Buffer.alloc(300 * 1024 * 1024, 1).length > 0", marks=needs_node),
    ("python", "block = bytearray(300 * 1024 * 1024)\nreturn len(block) > 0"),
])
def test_script_assertion_memory_mb_stops_a_hog(type_: str, code: str) -> None:
    roomy = grade({"type": type_, "value": code, "memory_mb": 1024}, "x")
    assert roomy.passed, roomy.reason
    starved = grade({"type": type_, "value": code, "memory_mb": 128}, "x")
    # killed, or the allocation refused inside (Python's MemoryError, Node's RangeError): an error either way
    assert starved.status == "error" and ("failed to run" in starved.reason or "threw" in starved.reason)
    assert grade({"type": type_, "value": "1 > 0", "memory_mb": 128}, "x").passed  # the hog, not the runtime


@pytest.mark.slow  # sandboxed subprocesses that wait
@needs_node
def test_transformed_timeout_ms_ends_a_slow_transform() -> None:
    raw = {"type": "transformed", "transform": ["new Promise((done) => setTimeout(() => done(output), 3000))"],
           "assert": {"type": "equals", "value": "x"}}
    assert grade({**raw, "timeout_ms": 60_000}, "x").passed
    cut = grade({**raw, "timeout_ms": 1000}, "x")
    assert cut.status == "error" and "transform failed: timed out" in cut.reason
