"""The ``expectations`` grader against the fake OpenAI server: items, temperature, re-asking."""

from __future__ import annotations

import json

from tests.grading.test_param_effects import judged
from tests.support.fake_openai import FakeOpenAIServer

ITEMS = ["Names the list", "Is polite"]


def test_items_are_asked_in_one_call_and_graded_each(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script = [
        json.dumps({"expectations": [{"text": "x", "passed": True, "evidence": "a"}]}),  # one item: asked again
        json.dumps({"expectations": [{"text": "Names the list", "passed": True, "evidence": "lists it"},
                                     {"text": "Is polite", "passed": False, "evidence": "curt"}]}),
    ]
    grade = judged(fake_openai, "expectations", "DENIED", items=ITEMS, temperature=0.4)
    first, second = fake_openai.requests[-2:]
    assert "## Expectations\n1. Names the list\n2. Is polite" in first["messages"][-1]["content"]
    assert '"expectations" has 1 items, 2 were asked' in second["messages"][-1]["content"]
    assert first["temperature"] == 0.4
    assert (grade.score, grade.passed) == (0.5, False)
    assert grade.details["expectations"] == [{"text": "Names the list", "passed": True, "evidence": "lists it"},
                                             {"text": "Is polite", "passed": False, "evidence": "curt"}]
    assert grade.reason == "1/2 expectations met; failed: 2. Is polite"


def test_all_met_passes(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.responder = lambda body: json.dumps(
        {"expectations": [{"text": t, "passed": True, "evidence": "seen"} for t in ITEMS]})
    grade = judged(fake_openai, "expectations", "fine", items=ITEMS)
    assert (grade.score, grade.passed, grade.details["pass_rate"]) == (1.0, True, 1.0)
    assert fake_openai.requests[-1]["temperature"] == 0
