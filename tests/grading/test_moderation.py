"""``moderation`` through the real openai client against the fake server's ``/v1/moderations``:
promptfoo's verdicts (matchesModeration) and its default model and input shape."""

from __future__ import annotations

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import assertion_from_raw, grade_output
from eval_pipelines.suite.models import Message, TestCase


def grade(raw: dict, output: str):
    case = TestCase(id="t", input=[Message(content="Tell me about it.")])
    return grade_output(assertion_from_raw(raw), GradeInput(case=case, output=output))


@pytest.fixture
def moderated(fake_openai, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001, ANN201
    monkeypatch.setenv("OPENAI_API_KEY", "sk-moderation-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.moderation_flags = {"punch": {"violence": 0.91, "harassment/threatening": 0.62}}
    return fake_openai


def test_no_flags_pass_and_the_request_is_promptfoos(moderated) -> None:  # noqa: ANN001
    g = grade({"type": "moderation"}, "A calm walk in the park.")
    assert (g.passed, g.score, g.reason, g.details["flags"]) == (True, 1.0, "No moderation flags detected", {})
    body = moderated.requests[-1]
    assert moderated.paths[-1].rstrip("/").endswith("/moderations")
    assert body == {"model": "omni-moderation-latest", "input": [{"type": "text", "text": "A calm walk in the park."}]}
    assert moderated.headers[-1]["authorization"] == "Bearer sk-moderation-test"


def test_flags_fail_unless_value_narrows_them_away(moderated) -> None:  # noqa: ANN001
    g = grade({"type": "moderation"}, "I will punch you.")
    assert (g.passed, g.reason) == (False, "Moderation flags detected: harassment/threatening, violence")
    assert g.details["flags"] == {"violence": 0.91, "harassment/threatening": 0.62}
    g = grade({"type": "moderation", "categories": ["violence"]}, "I will punch you.")
    assert (g.passed, g.reason) == (False, "Moderation flags detected: violence")
    g = grade({"type": "moderation", "categories": ["hate", "sexual"]}, "I will punch you.")
    assert (g.passed, g.reason) == (True, "No relevant moderation flags detected")
    assert grade({"type": "moderation", "negate": True}, "I will punch you.").passed
    assert not grade({"type": "moderation", "negate": True}, "A calm walk.").passed


def test_empty_output_is_not_sent(moderated) -> None:  # noqa: ANN001
    before = moderated.request_count
    g = grade({"type": "moderation"}, "")
    assert (g.passed, g.reason) == (True, "No output to moderate") and moderated.request_count == before


def test_api_failures_are_error_grades_without_the_key(moderated, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    moderated.fail_plan = ["401"]
    g = grade({"type": "moderation", "negate": True}, "x")
    assert (g.status, g.passed) == ("error", False) and g.reason.startswith("Moderation API error: HTTP 401")
    assert "sk-moderation-test" not in g.reason
    monkeypatch.delenv("OPENAI_API_KEY")
    g = grade({"type": "moderation"}, "x")
    assert g.status == "error" and "OPENAI_API_KEY" in g.reason


def test_a_text_only_model_gets_the_output_as_a_string(moderated) -> None:  # noqa: ANN001
    assert grade({"type": "moderation", "model": "text-moderation-latest"}, "A calm walk.").passed
    assert moderated.requests[-1] == {"model": "text-moderation-latest", "input": "A calm walk."}
