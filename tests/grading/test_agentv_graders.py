"""Graders as AgentV v2 defines them: tool_trajectory modes, icontains_any/all, date fields,
exploration ratio, composite threshold and llm_judge aggregators, agent_judge without a
prompt, llm_judge ``prompt: {command}`` (the judge is the fake OpenAI server over real HTTP)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.suite.models import Assertion, Message, TestCase
from tests.grading.test_model_graded import grade as judged, prompt_of, script
from tests.support.fake_openai import FakeOpenAIServer

TRACE = [
    {"tool": "search", "args": {"query": "weather Paris", "limit": 3}, "duration_ms": 45,
     "result": {"results": [{"link": "https://a", "snippet": "x"}, {"link": "https://b"}]}},
    {"tool": "search", "args": {"query": "forecast"}},
    {"tool": "get_weather", "args": {"location": "Paris"}, "duration_ms": 900},
]


def grade(type_: str, output: str = "", *, trace: list[dict[str, Any]] | None = None,
          expected_output: Any = None, **config: Any):
    case = TestCase(id="t1", input=[Message(content="q")], expected_output=expected_output)
    return grade_output(Assertion(type=type_, config=config), GradeInput(case=case, output=output, trace=trace or []))


def test_any_order_minimums_score_per_tool() -> None:
    assert grade("tool_trajectory", trace=TRACE, mode="any_order", minimums={"search": 2, "get_weather": 1}).score == 1
    g = grade("tool_trajectory", trace=TRACE, mode="any_order", minimums={"search": 3, "get_weather": 1, "x": 1})
    assert g.score == pytest.approx(1 / 3) and g.details["missing"] == ["search", "x"]


def test_superset_and_subset_modes() -> None:
    expected = [{"tool": "get_weather"}, {"tool": "search"}]
    assert grade("tool_trajectory", trace=TRACE, mode="superset", expected=expected).score == 1
    # subset: every call must be allowed; one search is not (it asked for the forecast).
    g = grade("tool_trajectory", trace=TRACE, mode="subset",
              expected=[{"tool": "get_weather"}, {"tool": "search", "args": {"query": "weather Paris"}}])
    assert g.score == pytest.approx(2 / 3) and not g.passed
    assert grade("tool_trajectory", trace=[], mode="subset", expected=expected).score == 1  # nothing forbidden done


@pytest.mark.parametrize("args_match, args, ok", [
    ("superset", {"query": "weather Paris"}, True),
    ("exact", {"query": "weather Paris"}, False),
    ("exact", {"query": "weather Paris", "limit": 3}, True),
    ("subset", {"query": "weather Paris", "limit": 3, "lang": "fr"}, True),
    ("subset", {"query": "weather Paris"}, False),
    ("ignore", {"query": "nothing alike"}, True),
    (["query"], {"query": "weather Paris", "limit": 99}, True),
    (["limit"], {"query": "weather Paris", "limit": 99}, False),
])
def test_args_match_variants(args_match: Any, args: dict[str, Any], ok: bool) -> None:
    g = grade("tool_trajectory", trace=TRACE[:1], mode="in_order", args_match=args_match,
              expected=[{"tool": "search", "args": args}])
    assert (g.score == 1) is ok


def test_args_any_per_item_match_latency_and_output() -> None:
    g = grade("tool_trajectory", trace=TRACE, mode="in_order", expected=[
        {"tool": "search", "args": "any", "max_duration_ms": 100},
        {"tool": "get_weather", "args": {"location": "Paris"}, "max_duration_ms": 500},
    ])
    # 2 sequence checks pass, latency: search 45 <= 100 passes, get_weather 900 > 500 fails.
    assert g.score == pytest.approx(3 / 4) and "took 900 ms" in g.reason
    # in_order (AgentV): the first search call is the one compared; its arguments differ.
    assert grade("tool_trajectory", trace=TRACE, mode="in_order",
                 expected=[{"tool": "search", "args": {"query": "forecast"}}]).score == 0
    no_timing = grade("tool_trajectory", trace=TRACE, mode="superset",
                      expected=[{"tool": "search", "args": {"query": "forecast"}, "max_duration_ms": 10}])
    assert no_timing.score == 1 and no_timing.details["skipped"]
    out = grade("tool_trajectory", trace=TRACE, mode="in_order",
                expected=[{"tool": "search", "output": {"results": [{"link": "https://b"}]}}])
    assert out.score == 1
    miss = grade("tool_trajectory", trace=TRACE, mode="in_order",
                 expected=[{"tool": "search", "output": {"results": [{"link": "https://c"}]}}])
    assert miss.score == 0


def test_icontains_any_and_all() -> None:
    assert grade("icontains_any", "Sorry, I CANNOT help.", value=["cannot", "won't"]).score == 1
    assert grade("icontains-any", "Sure thing", value=["cannot", "won't"]).score == 0
    assert grade("icontains_all", "The LOUVRE and the Eiffel tower", value=["louvre", "EIFFEL"]).score == 1
    g = grade("icontains-all", "The Louvre", value=["louvre", "eiffel"])
    assert g.score == 0 and g.details["missing"] == ["eiffel"]
    assert grade("icontains_any", "STRASSE", value="straße").score == 1  # casefold, not lower


def test_field_accuracy_dates_in_agentv_formats() -> None:
    fields = [{"path": "invoice_date", "match": "date", "formats": ["DD-MMM-YYYY", "YYYY-MM-DD"]}]
    assert grade("field_accuracy", '{"invoice_date": "2025-01-15"}', expected_output={"invoice_date": "15-JAN-2025"},
                 fields=fields).score == 1
    assert grade("field_accuracy", '{"invoice_date": "2025-01-16"}', expected_output={"invoice_date": "15-JAN-2025"},
                 fields=fields).score == 0
    assert grade("field_accuracy", '{"invoice_date": "01/15/2025"}', expected_output={"invoice_date": "15-JAN-2025"},
                 fields=fields).score == 0  # not one of the formats given


def test_execution_metrics_exploration_ratio() -> None:
    trace = [{"tool": "Read"}, {"tool": "grep"}, {"tool": "Edit"}, {"tool": "Write"}]
    assert grade("execution_metrics", trace=trace, target_exploration_ratio=0.5, exploration_tolerance=0.1).score == 1
    assert grade("execution_metrics", trace=trace, target_exploration_ratio=0.9, exploration_tolerance=0.1).score == 0


def test_composite_threshold_aggregator() -> None:
    children = [{"name": "a", "type": "contains", "value": "x"}, {"name": "b", "type": "contains", "value": "y"},
                {"name": "c", "type": "contains", "value": "z"}]
    agg = {"type": "threshold", "threshold": 0.5}
    assert grade("composite", "x y", **{"assert": children, "aggregator": agg}).score == 1
    g = grade("composite", "x", **{"assert": children, "aggregator": agg})
    assert g.score == pytest.approx(1 / 3) and "below" not in g.reason and "< threshold 0.5" in g.reason


def test_composite_llm_judge_aggregator_reads_the_children(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    (tmp_path / "resolve.md").write_text("Resolve conflicts between the checks.\n", encoding="utf-8")
    script(fake_openai, {"score": 0.9, "reasoning": "Both fine."})
    g = judged(fake_openai, "composite", "concise and detailed", suite_dir=tmp_path, **{
        "assert": [{"name": "short", "type": "contains", "value": "concise"},
                   {"name": "long", "type": "contains", "value": "elaborate"}],
        "aggregator": {"type": "llm-judge", "prompt": "resolve.md"}})
    prompt = prompt_of(fake_openai)
    assert "Resolve conflicts between the checks." in prompt and '"name": "long"' in prompt
    assert "concise and detailed" in prompt
    assert g.status == "graded" and g.details["aggregator"] == "llm_judge"


def test_agent_judge_without_prompt_judges_the_criteria(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 1.0, "reasoning": "Tests exist."})
    case = TestCase(id="t1", input=[Message(content="Create unit tests")], criteria="Creates a tests/ folder.")
    g = judged(fake_openai, "agent_judge", "done", case=case,
               rubrics=["Tests contain assertions", {"id": "dir", "outcome": "tests/ exists", "required": True}])
    prompt = prompt_of(fake_openai)
    assert "Creates a tests/ folder." in prompt
    assert "**criterion-1** (weight 1): Tests contain assertions" in prompt and "**dir** (weight 1, required)" in prompt
    assert g.status == "graded" and g.passed


def test_llm_judge_prompt_written_by_a_command(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    (tmp_path / "make_prompt.py").write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "print('Is ' + repr(data['candidate_answer']) + ' a correct answer to ' + data['question'] + '?')\n",
        encoding="utf-8")
    script(fake_openai, {"score": 1.0, "reasoning": "Yes."})
    case = TestCase(id="t1", input=[Message(content="What is 2+2?")], expected_output="4")
    g = judged(fake_openai, "llm_judge", "4", case=case, suite_dir=tmp_path,
               prompt={"command": ["python", "make_prompt.py"]})
    assert g.status == "graded", g.reason
    assert "Is '4' a correct answer to What is 2+2?" in prompt_of(fake_openai)
    broken = judged(fake_openai, "llm_judge", "4", case=case, suite_dir=tmp_path,
                    prompt={"command": ["python", "-c", "import sys; sys.exit(3)"]})
    assert broken.status == "error" and "exited with 3" in broken.reason


def test_rubric_operators_label_the_criteria_and_tell_the_judge_what_they_mean(fake_openai: FakeOpenAIServer) -> None:
    # AgentV's rubric operators (features/rubric/evals/operators.eval.yaml): `correctness` needs the outcome
    # stated, `contradiction` is met unless the output conflicts with it.
    script(fake_openai, {"scores": {"supported-revenue": 1, "no-margin-contradiction": 0, "plain": 1}, "reasoning": "r"})
    g = judged(fake_openai, "rubrics", "Q4 revenue rose to $10M. Margin improved to 47%.", criteria=[
        {"id": "supported-revenue", "operator": "correctness", "outcome": "States Q4 revenue of $10M.", "required": True},
        {"id": "no-margin-contradiction", "operator": "contradiction", "outcome": "Gross margin declined to 42%."},
        {"id": "plain", "outcome": "Two sentences."}])
    prompt = prompt_of(fake_openai)
    assert "**supported-revenue** (weight 1, scale 0 to 1, required, operator: correctness)" in prompt, prompt
    assert "**no-margin-contradiction** (weight 1, scale 0 to 1, operator: contradiction)" in prompt
    assert "**plain** (weight 1, scale 0 to 1): Two sentences." in prompt
    assert "- correctness: give the top score only when the output affirmatively states" in prompt
    assert "- contradiction: give the top score unless the output makes a claim incompatible" in prompt
    assert g.status == "graded" and g.details["rubric_scores"]["no-margin-contradiction"] == 0
    script(fake_openai, {"scores": {"a": 1}, "reasoning": "r"})
    judged(fake_openai, "rubrics", "x", criteria=[{"id": "a", "outcome": "o"}])
    assert "## Operators" not in prompt_of(fake_openai)  # no operator, prompt as before
    bad = judged(fake_openai, "rubrics", "x", criteria=[{"id": "a", "outcome": "o", "operator": "entails"}])
    assert bad.status == "error" and "operator" in bad.reason


def test_rubrics_with_a_prompt_template_fill_its_slots(fake_openai: FakeOpenAIServer) -> None:
    # promptfoo's rubricPrompt / AgentV's rubric_prompt on a structured rubric: the template is the prompt,
    # {criteria} the criteria list; our reply format is appended.
    script(fake_openai, {"scores": {"rubric-1": 1, "rubric-2": 0.5}, "reasoning": "r"})
    case = TestCase(id="t1", input=[Message(content="Write FizzBuzz.")])
    g = judged(fake_openai, "rubrics", "for i in range(1, 16): ...", case=case,
               prompt="Q: {input}\nRUBRIC:\n{criteria}\nA: {output}",
               criteria=[{"id": "rubric-1", "outcome": "Simple", "weight": 0.5},
                         {"id": "rubric-2", "outcome": "Handles 15", "weight": 1.5, "operator": "correctness"}])
    prompt = prompt_of(fake_openai)
    assert prompt.startswith("Q: Write FizzBuzz.\nRUBRIC:\n## Operators")
    assert "- **rubric-1** (weight 0.5, scale 0 to 1): Simple" in prompt
    assert "A: for i in range(1, 16): ..." in prompt and "## System Output" not in prompt
    assert '"rubric-2": <number from 0 to 1>' in prompt
    assert g.status == "graded" and g.score == pytest.approx((0.5 * 1 + 1.5 * 0.5) / 2)
