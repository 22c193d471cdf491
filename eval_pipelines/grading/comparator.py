"""Blind comparison of two versions' outputs of one case (skill-creator's comparator,
``skills/skill-creator/agents/comparator.md``).

The judge sees the case's prompt, its expectations (if any) and two outputs labelled A and B; it
does not know which version wrote which. Which one is A is drawn per output from a seeded random
generator (``current_is_a``), recorded with the result, and undone after the judge answered
(``unblind``). The judge answers with the comparator's JSON: ``winner`` ("A", "B" or "TIE"),
``reasoning``, and, when it gives them, ``rubric`` (per label: content and structure criteria
scored 1-5, ``content_score``, ``structure_score``, ``overall_score`` 1-10), ``output_quality``
(per label: ``score``, ``strengths``, ``weaknesses``) and ``expectation_results``.
"""

from __future__ import annotations

import json
import random
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from eval_pipelines.grading.judge import Judge, JudgeError

MAX_OUTPUT_CHARS = 20_000  # per output shown to the judge (answer and files together)

SYSTEM = """You are a blind comparator. You judge which of two outputs, labelled A and B, better accomplishes \
the task. You do not know which version of a skill produced which output: do not try to infer it; judge output \
quality and task completion only.

Build a rubric for the task with two dimensions, each criterion scored 1 (poor) to 5 (excellent): content \
(correctness, completeness, accuracy) and structure (organization, formatting, usability), adapted to the task. \
Score each output: content_score and structure_score are the averages of their criteria (1-5), overall_score \
combines them on a 1-10 scale. If expectations are given, check each against both outputs as secondary evidence. \
Decide the winner by the overall rubric score first, the expectations second; declare a TIE only when the outputs \
are truly equivalent. Be decisive and specific.

Respond with only a JSON object:
{"winner": "A" | "B" | "TIE", "reasoning": "...",
 "rubric": {"A": {"content": {...}, "structure": {...}, "content_score": 0, "structure_score": 0, "overall_score": 0},
            "B": {...}},
 "output_quality": {"A": {"score": 0, "strengths": [], "weaknesses": []}, "B": {...}},
 "expectation_results": {"A": {"passed": 0, "total": 0, "pass_rate": 0.0, "details": [{"text": "...", "passed": true}]},
                         "B": {...}}}
Leave out expectation_results when no expectations are given."""


class BlindVerdict(BaseModel):
    winner: Literal["A", "B", "TIE"]
    reasoning: str = ""
    rubric: dict[str, Any] | None = None
    output_quality: dict[str, Any] | None = None
    expectation_results: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("winner", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    def overall(self, label: str) -> float | None:
        """The rubric's ``overall_score`` of one label (else the output quality's ``score``)."""
        for block, key in ((self.rubric, "overall_score"), (self.output_quality, "score")):
            value = (block or {}).get(label, {})
            value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
        return None


def current_is_a(seed: str | int, test_id: str, target: str, trial: int) -> bool:
    """Whether the current version's output is shown as A: a fair coin, seeded per output."""
    return random.Random(f"{seed}:{test_id}:{target}:{trial}").random() < 0.5


def unblind(winner: str, current_as_a: bool) -> str:
    """``current``, ``baseline`` or ``tie`` from the judge's label."""
    if winner == "TIE":
        return "tie"
    return "current" if (winner == "A") == current_as_a else "baseline"


def shown_output(answer: str | None, files: list[dict[str, Any]] | None) -> str:
    """One output as the judge reads it: the answer, then each file the run wrote with its text."""
    parts = [answer or "(no answer)"]
    for f in files or []:
        text = f.get("text")
        parts.append(f"--- file {f.get('path')} ({f.get('size')} bytes) ---\n"
                     + (text if text is not None else "(binary file, not shown)"))
    shown = "\n\n".join(parts)
    return shown if len(shown) <= MAX_OUTPUT_CHARS else shown[:MAX_OUTPUT_CHARS] + "\n... (cut)"


def request_text(prompt: str, output_a: str, output_b: str, expectations: list[str]) -> str:
    listed = "\n".join(f"{i}. {t}" for i, t in enumerate(expectations, 1)) or "(none given)"
    return (f"## Task (eval prompt)\n{prompt}\n\n## Expectations\n{listed}\n\n"
            f"## Output A\n{output_a}\n\n## Output B\n{output_b}\n")


async def compare(judge: Judge, prompt: str, output_a: str, output_b: str,
                  expectations: list[str]) -> tuple[BlindVerdict, str]:
    """The judge's verdict on A versus B and its raw reply; JudgeError when it gives none."""
    reply = await judge.complete_json(SYSTEM, request_text(prompt, output_a, output_b, expectations),
                                      temperature=0.0)
    data = dict(reply.data)
    known = {k: data.pop(k) for k in ("winner", "reasoning", "rubric", "output_quality", "expectation_results")
             if k in data}
    try:
        return BlindVerdict(**known, extra=data), reply.raw
    except ValidationError as exc:
        raise JudgeError(f"the comparator's reply is not a verdict: {json.dumps(known)[:200]} "
                         f"({exc.errors()[0]['msg']})") from None
