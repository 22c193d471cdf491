"""Batch grading gives exactly the rows the per-output path gives.

Random outputs (whitespace of every kind, CRLF, case, non-ASCII) against every
batchable assertion type with every option, negated or not, gated or not: each
batch row must equal what ``grade_output`` makes of the same output.
"""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from eval_pipelines.grading.dispatch import grade_batch as batch_grade, batch_plan
from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.registry import get_grader, known_types
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.grading.dispatch import grade_frame
from eval_pipelines.store.tables import decode_outputs
from eval_pipelines.suite.models import Assertion, Message, Suite, TestCase
from eval_pipelines.store.connection import Partition

ALPHABET = ["ok", "OK", "Ok", "yes", "no", " ", "\t", "\r\n", "\n", "\r", "\u00a0", "\u2003",
            "İ", "ß", "straße", "\u00e9", "é", "\"", "\\", "{", "}", "c0001", "C0001", "😀"]

CONFIGS = [
    ("equals", {"value": "ok c0001"}), ("equals", {"value": "OK c0001", "case_sensitive": False}),
    ("equals", {"value": " ok\r\n", "trim_whitespace": False}),
    ("equals", {"value": "ok\r\nyes", "normalize_newlines": False}), ("equals", {"value": 42}),
    ("equals", {"value": {"a": ["ok", 1]}}), ("equals", {}),  # {} compares with expected_output
    ("contains", {"value": "ok"}), ("contains", {"value": ["ok", "yes"]}),
    ("contains", {"value": ["OK", "İ"], "case_sensitive": False}),
    ("icontains", {"value": "OK"}), ("icontains", {"value": ["straße", "Ok"], "case_sensitive": True}),
    ("contains_any", {"value": ["no", "yes"]}), ("contains_any", {"value": "ß", "case_sensitive": False}),
    ("starts_with", {"value": "ok"}), ("starts_with", {"value": ["OK", "yes"], "case_sensitive": False}),
    ("ends_with", {"value": "c0001"}), ("ends_with", {"value": ["😀", "C0001"], "case_sensitive": False}),
]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) + rng.choice(["", " "]) for _ in range(rng.randint(0, 8)))


def make_suite(rng: random.Random, cases: int) -> Suite:
    tests = []
    for i in range(cases):
        assertions = []
        for _ in range(rng.randint(1, 4)):
            kind, config = rng.choice(CONFIGS)
            assertions.append(Assertion(type=kind, config=config, negate=rng.random() < 0.25,
                                        required=rng.choice([False, True, 0.5, 1.0]),
                                        weight=rng.choice([1.0, 2.5]), name=rng.choice([None, "named"])))
        tests.append(TestCase(id=f"case-{i:03d}", input=[Message(content="q")], assertions=assertions,
                              expected_output=rng.choice(["ok c0001", " OK\r\n", None])))
    return Suite(name="batch", format="eval-yaml", source_file="eval.yaml", tests=tests)


def test_batchable_types_are_the_text_graders() -> None:
    batchable = {get_grader(t).type for t in known_types() if get_grader(t).batchable}
    assert batchable == {"equals", "contains", "icontains", "contains_any", "starts_with", "ends_with"}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batch_rows_equal_per_output_rows(seed: int) -> None:
    rng = random.Random(seed)
    suite = make_suite(rng, 60)
    outputs = pd.DataFrame([
        {"test_id": case.id, "target": target, "trial": trial,
         "output": random_text(rng) if rng.random() > 0.05 else rng.choice(["ok c0001", "OK C0001 "]),
         "error": None}
        for case in suite.tests for target in ("a", "b") for trial in range(3)])
    plan = batch_plan(suite)
    batched = batch_grade(plan, outputs)
    by_key = {(r["test_id"], r["target"], r["trial"], r["assertion_index"]): r
              for r in batched.to_dict("records")}
    planned = set(zip(plan["test_id"], plan["assertion_index"]))
    # equals with neither value nor expected_output is left to the per-output path (an error grade).
    expected_rows = 0
    for row in outputs.to_dict("records"):
        case = next(c for c in suite.tests if c.id == row["test_id"])
        for index, assertion in enumerate(case.assertions):
            if (case.id, index) not in planned:
                assert assertion.type == "equals" and not assertion.config and case.expected_output is None
                continue
            expected_rows += 1
            grade = grade_output(assertion, GradeInput(case=case, output=row["output"]), index)
            got = by_key[(case.id, row["target"], row["trial"], index)]
            assert (got["score"], bool(got["passed"]), got["status"], got["reason"]) == \
                (grade.score, grade.passed, grade.status, grade.reason), (assertion, row["output"])
            assert got["details"] == json.dumps(grade.details, ensure_ascii=False)
            assert (got["assertion_type"], got["assertion_name"], got["weight"], got["required"]) == \
                (grade.assertion_type, grade.assertion_name, grade.weight, json.dumps(grade.required))
    assert len(batched) == expected_rows > 500


def test_grade_rows_mixes_batch_and_per_output_grades_in_order() -> None:
    """A case with a batchable and a per-output assertion (regex) gets both rows,
    in assertion order; error outputs get none; the missing-expected equals is an error grade."""
    case = TestCase(id="c1", input=[Message(content="q")], assertions=[
        Assertion(type="regex", config={"pattern": "^ok"}),
        Assertion(type="equals", config={"value": "ok"}),
        Assertion(type="equals"),  # no value, no expected_output: an error grade
    ])
    suite = Suite(name="mixed", format="eval-yaml", tests=[case], source_file="/nonexistent/suite.yaml")
    outputs = pd.DataFrame([
        {"test_id": "c1", "target": "t", "trial": 0, "output": "ok", "error": None, "latency_ms": 1.0,
         "prompt_tokens": None, "completion_tokens": None, "cost_usd": None, "cached": False,
         "attempts": 1, "llm_calls": 1, "tool_calls": 0, "trace": "[]"},
        {"test_id": "c1", "target": "t", "trial": 1, "output": None, "error": "HTTP 500", "latency_ms": 1.0,
         "prompt_tokens": None, "completion_tokens": None, "cost_usd": None, "cached": False,
         "attempts": 5, "llm_calls": 1, "tool_calls": 0, "trace": "[]"},
    ])
    rows = grade_frame(suite, outputs, decode_outputs, suite_dir=None)
    assert rows["assertion_index"].tolist() == [0, 1, 2]
    assert rows["assertion_type"].tolist() == ["regex", "equals", "equals"]
    assert rows["status"].tolist() == ["graded", "graded", "error"]
    assert rows["passed"].tolist() == [True, True, False]
    assert set(rows["trial"]) == {0}


def test_html_report_lists_every_failure_and_change_first_when_cases_exceed_the_limit(monkeypatch) -> None:
    from types import SimpleNamespace

    from eval_pipelines.reports.html import results as html_results
    monkeypatch.setattr(html_results, "HTML_CASE_LIMIT", 4)
    cases = [SimpleNamespace(test_id=f"c{i}", outcome="pass", change="same") for i in range(10)]
    cases[7].outcome, cases[8].change, cases[9].outcome = "fail", "now_passing", "error"
    listed = html_results.listed_cases(SimpleNamespace(cases=cases))
    # the three notable cases and one passing case fill the limit, in the report's order
    assert [c.test_id for c in listed] == ["c0", "c7", "c8", "c9"]
    small = cases[:3]
    assert html_results.listed_cases(SimpleNamespace(cases=small)) == small
