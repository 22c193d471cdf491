"""A test's ``options.rubricPrompt``: the judge template of its model-graded assertions."""

from __future__ import annotations

from typing import Any

MODEL_GRADED = {"llm-rubric", "model-graded-closedqa", "factuality", "g-eval", "answer-relevance"}


def with_rubric_prompt(asserts: Any, prompt: Any) -> Any:
    """A test's ``options.rubricPrompt`` given to each of its model-graded assertions without one."""
    if prompt is None or not isinstance(asserts, list):
        return asserts
    return [dict(a, rubricPrompt=prompt) if isinstance(a, dict) and "rubricPrompt" not in a
            and str(a.get("type", "")).removeprefix("not-") in MODEL_GRADED else a for a in asserts]
