"""Seed 003: every grader type, code method, expected type and comparison a harness case may
name becomes the assertion that grades it, with its options (issue 30, item 8: an unknown one
used to fall back to `equals`; the refusals are in tests/cli/test_dropped_fields.py and the
probes of tests/formats/test_field_contract.py). Seed 000 hybrid weights reach every assertion
by its strategy name (item 6)."""

from __future__ import annotations

import json
from pathlib import Path

from eval_pipelines.formats.loader import load_suite

CASES = """\
- id: exact
  input: {content: a}
  expected: {type: exact, value: a, alternatives: [b]}
  grader: {type: code, config: {method: exact_match, case_sensitive: false}}
- id: regex
  input: {content: a}
  expected: {type: pattern, value: "^a"}
  grader: {type: code, config: {method: regex, flags: [ignorecase]}}
- id: function
  input: {content: a}
  expected: {type: functional, value: {test_cases: [{input: [1], output: 1}]}}
  grader: {type: code, config: {method: function_output, function_name: f}}
- id: contains
  input: {content: a}
  expected: {type: contains, value: a}
  grader: {type: code, config: {method: contains, case_sensitive: false}}
- id: semantic
  input: {content: a}
  expected: {type: semantic, value: a text}
- id: structural
  input: {content: a}
  grader: {type: code, config: {method: structural_match, strict: true}}
- id: model
  input: {content: a}
  expected: {type: semantic, value: {must_include: [a]}}
  grader: {type: model, config: {rubric: "Is it right? (1-5)"}}
- id: human
  input: {content: a}
  grader: {type: human, config: {rubric: "Rate it"}}
- id: compare-structural
  baseline: {output: {a: 1}}
  current: {input: x}
  comparison:
    type: structural
    ignore_fields: [b]
    options: {ignore_fields: [c], ignore_values: [d], require_keys: [a]}
    tolerance: {allow_additional_fields: false, allow_field_reordering: false}
- id: compare-numeric
  baseline: {output: {a: 1}}
  current: {input: x}
  comparison: {type: numeric, tolerance: {min_delta: -1}}
- id: compare-exact
  baseline: {output: same}
  current: {input: x}
  comparison: {type: exact}
- id: compare-semantic
  baseline: {output: similar}
  current: {input: x}
  comparison: {type: semantic}
"""


def test_every_grader_type_method_expectation_and_comparison_becomes_its_assertion(tmp_path: Path) -> None:
    (tmp_path / "evals.yaml").write_text(CASES)
    suite, _ = load_suite(tmp_path / "evals.yaml")
    made = {case.id: [(a.type, a.config) for a in case.assertions] for case in suite.tests}
    (composite,) = made["exact"]
    assert composite[0] == "composite" and [c["case_sensitive"] for c in composite[1]["assert"]] == [False, False]
    assert made["regex"] == [("regex", {"pattern": "^a", "flags": ["ignorecase"]})]
    assert made["function"][0][0] == "function_output" and made["function"][0][1]["function_name"] == "f"
    assert made["contains"] == [("contains", {"value": "a", "case_sensitive": False})]
    assert made["semantic"] == [("semantic_sim", {"value": "a text"})]
    assert made["structural"] == [("structural", {"strict": True})]
    assert [t for t, _ in made["model"]] == ["model", "must_include"]
    assert made["human"] == [("human", {"rubric": "Rate it"})]
    assert made["compare-structural"] == [("structural", {
        "baseline": {"a": 1}, "ignore_fields": ["b", "c"], "ignore_values": ["d"], "require_keys": ["a"],
        "allow_additional_fields": False, "allow_field_reordering": False})]
    assert made["compare-numeric"] == [("numeric", {"baseline": {"a": 1}, "tolerance": {"min_delta": -1}})]
    assert made["compare-exact"] == [("equals", {"value": "same"})]
    assert made["compare-semantic"] == [("semantic_sim", {"value": "similar"})]


def test_hybrid_weights_reach_every_assertion_by_its_strategy_name(tmp_path: Path) -> None:
    names = ["exact_match", "regex_match", "json_schema", "semantic_sim", "llm_judge", "custom"]
    case = {"id": "c1", "name": "n", "input": {"prompt": "p"},
            "expected": {"output": "4", "patterns": ["4"], "jsonSchema": {"type": "object"},
                         "semanticThreshold": 0.7, "rubric": "right?", "customScript": "check.py"},
            "evaluation": {"strategy": "hybrid", "weights": {n: i + 1 for i, n in enumerate(names)}}}
    (tmp_path / "tests.json").write_text(json.dumps({"version": "2.0", "profile": "enterprise", "testCases": [case]}))
    (tmp_path / "check.py").write_text("print('{\"score\": 1}')\n")
    suite, _ = load_suite(tmp_path / "tests.json")
    assert [(a.name, a.weight) for a in suite.tests[0].assertions] == [(n, i + 1.0) for i, n in enumerate(names)]
