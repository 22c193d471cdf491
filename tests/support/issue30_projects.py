"""Suites for the issue 30 tests (tests/cli/test_issue30_effects.py, tests/defs/test_issue30_dagster.py)."""

from __future__ import annotations

# A required `contains` that fails beside a required `cost` the fake server never measures.
GATED = """\
thresholds: {required_pass_rate: 0.8}
tests:
  - id: gated
    input: alpha
    assert:
      - {type: contains, value: omega, required: true}
      - {type: cost, max_usd: 1, required: true}
  - id: fine
    input: beta
    assert: [{type: contains, value: beta}]
"""

TAGGED_CASES = [
    {"id": "tc-001", "name": "first", "tags": "edge", "input": {"prompt": "alpha"}, "expected": {"output": "alpha"}},
    {"id": "tc-002", "name": "second", "metadata": {"tags": "edge"}, "input": {"prompt": "beta"},
     "expected": {"output": "beta"}},
    {"id": "tc-003", "name": "third", "tags": ["a", "b"], "input": {"prompt": "gamma"},
     "expected": {"output": "gamma"}},
]

HARNESS_TAGS = """\
eval_suite:
  name: tagged
  evals:
    - id: greet
      input: {type: prompt, content: hello}
      expected_output: {type: contains, value: hello}
      grader: {type: code}
      metadata: {tags: edge}
"""

# A k-gate spelled SPELLING, with no trials given: the run does k = 3.
HAT_SPELLED = {
    "harness": """\
eval_suite:
  name: spelled
  thresholds: {"SPELLING": 0.5}
  evals:
    - id: greet
      input: {type: prompt, content: hello}
      expected_output: {type: contains, value: hello}
      grader: {type: code}
""",
    "eval-yaml": """\
thresholds: {"SPELLING": 0.5}
tests:
  - {id: greet, input: hello, assert: [{type: contains, value: hello}]}
""",
}

# Seed 003 `model` graders on a 1-5 scale; the judge's reply is chosen by the case's input.
MODEL_GRADED = """\
eval_suite:
  name: model-graded
  evals:
    - id: good
      input: {type: prompt, content: good answer}
      grader: {type: model, config: {rubric: "Quality, 1-5 (4 Good)", scoring: {type: numeric, range: [1, 5]}}}
    - id: judge-says-no
      input: {type: prompt, content: judged failing}
      grader: {type: model, config: {rubric: "Quality, 1-5 (4 Good)"}}
    - id: no-verdict
      input: {type: prompt, content: no verdict}
      grader: {type: model, config: {rubric: "Quality, 1-5 (4 Good)"}}
    - id: own-mark
      input: {type: prompt, content: strict author}
      grader: {type: model, config: {rubric: "Quality, 1-5 (4 Good)", threshold: 0.9}}
"""
MODEL_REPLIES = {
    "good answer": {"scores": {"correctness": 4}, "overall_score": 4, "passed": True, "justification": "Good"},
    "judged failing": {"overall_score": 4, "passed": False, "justification": "misses the point"},
    "no verdict": {"overall_score": 4, "justification": "Good"},
    "strict author": {"overall_score": 4, "passed": True, "justification": "Good"},
}

# Seed 000: a rubric with passingThreshold 0.6; the judge gives 3.5 of 1-5 on both criteria (0.625).
RUBRIC_CASES = [{
    "id": "judged", "name": "judged", "input": {"prompt": "write slides"},
    "expected": {"rubric": {"criteria": [
        {"name": "accuracy", "description": "correct", "weight": 0.5, "scale": {"min": 1, "max": 5}},
        {"name": "tone", "description": "polite", "weight": 0.5, "scale": {"min": 1, "max": 5}}],
        "passingThreshold": 0.6}},
    "evaluation": {"strategy": "llm_judge"},
}, {"id": "exact", "name": "exact", "input": {"prompt": "alpha"}, "expected": {"output": "alpha"},
    "evaluation": {"strategy": "exact_match"}}]
RUBRIC_REPLY = {"scores": {"accuracy": 3.5, "tone": 3.5}, "reasoning": "adequate"}


def judge_by_input(replies: dict[str, dict]):
    """A responder for the fake server: a judge prompt gets the reply of the input it shows,
    any other request is answered with its own text (the model echoes)."""
    import json

    from tests.support.fake_openai import last_user_message

    def answer(body: dict) -> str:
        text = last_user_message(body)
        if "## System Output" in text:
            for needle, reply in replies.items():
                if needle in text:
                    return json.dumps(reply)
        return text

    return answer
