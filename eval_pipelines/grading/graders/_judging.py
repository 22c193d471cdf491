"""Shared plumbing of the model-graded graders (``llm_judge``, ``rubrics``, ``model``,
``semantic_sim``, ``agent_judge``); the leading underscore keeps the registry out.

* :func:`render` fills a prompt template by plain text replacement of a fixed set
  of ``{name}`` placeholders in one pass: nothing is evaluated, other braces
  (JSON examples, ``{other}``) stay as written, and a placeholder that appears
  inside a substituted value (an output that says ``{expected}``) is not expanded.
* :func:`ask` calls the judge for a JSON object and checks it with a parser
  supplied by the grader. A reply that is JSON but not in the asked shape (no
  score, a score out of range) is answered with the error and asked again, up to
  ``max_attempts`` calls; the judge itself re-asks when a reply is not JSON at all.
* :func:`calibrate` maps a raw score and the grader's own ``threshold`` onto the
  outer pass rule (score >= 0.8): see its docstring.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generic, Mapping, TypeVar

from pydantic import model_validator

from eval_pipelines.grading.base import Outcome, Params
from eval_pipelines.grading.graders.text import as_text

if TYPE_CHECKING:
    from eval_pipelines.grading.judge import Judge, JudgeReply
    from eval_pipelines.suite.models import TestCase

NO_JUDGE_REASON = ("no judge model configured: define a target named `judge` (type openai) "
                   "or set `judge:` in the suite (a promptfoo config grades with promptfoo's default "
                   "grader, OpenAI's, once OPENAI_API_KEY or OPENAI_BASE_URL is set)")
# The outer pass rule of grading.py for an assertion without its own minimum.
OUTER_PASS = 0.8
MAX_ATTEMPTS = 3
PROMPT_SUFFIXES = (".md", ".txt", ".prompt")
SYSTEM_PROMPT = ("You are an impartial, careful evaluator of AI system outputs. "
                 "You answer with a single JSON object and nothing else.")
DEFAULT_CRITERIA = ("The output correctly, completely and clearly does what the input asks"
                    " and agrees with the expected output when one is given.")
NO_EXPECTED = "(no reference output given)"

T = TypeVar("T")


class ReplyInvalid(ValueError):
    """A JSON reply that is not in the shape the grader asked for."""


class JudgeFailure(RuntimeError):
    """The judge gave no usable answer; ``str()`` is the reason to report."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class Asked(Generic[T]):
    value: T
    reply: "JudgeReply"  # the accepted reply
    attempts: int  # HTTP attempts over every call, retries included
    calls: int  # judge calls made (1 + schema re-asks)
    latency_ms: float
    cost_usd: float


# -- outcomes -------------------------------------------------------------------


def no_judge() -> Outcome:
    return Outcome(0.0, NO_JUDGE_REASON, {"judge_model": None}, status="error")


def judge_model(judge: "Judge") -> str:
    return str(getattr(judge, "model", "") or "unknown")


def failure(judge: "Judge", exc: Exception, **details: Any) -> Outcome:
    attempts = getattr(exc, "attempts", None)
    return Outcome(0.0, f"judge failed: {exc}",
                   {"judge_model": judge_model(judge), "judge_attempts": attempts, **details},
                   status="error")


def judge_details(judge: "Judge", asked: Asked[Any]) -> dict[str, Any]:
    return {
        "judge_model": judge_model(judge),
        "judge_attempts": asked.attempts,
        "judge_calls": asked.calls,
        "judge_latency_ms": round(asked.latency_ms, 1),
        "judge_cost_usd": asked.cost_usd,
    }


def calibrate(raw: float, threshold: float) -> float:
    """The grade score for a raw score judged against the grader's own ``threshold``.

    ``grading.py`` passes an assertion when its score is >= 0.8. To make that
    verdict agree with a grader's ``threshold`` without throwing away the
    gradation, the raw score in [0, 1] is mapped piecewise linearly so that
    ``threshold`` lands on 0.8: below it ``0.8 * raw / threshold``, above it
    ``0.8 + 0.2 * (raw - threshold) / (1 - threshold)``. The map is monotone and
    continuous, 0 stays 0 and 1 stays 1, and with the default threshold 0.8 it is
    the identity (the score is the raw score). The raw score is kept in details.
    """
    raw = min(1.0, max(0.0, float(raw)))
    if threshold == OUTER_PASS:
        return raw
    if raw >= threshold:
        return 1.0 if threshold >= 1.0 else OUTER_PASS + (1.0 - OUTER_PASS) * (raw - threshold) / (1.0 - threshold)
    return OUTER_PASS * raw / threshold  # threshold > raw >= 0, so threshold > 0


def verdict_reason(label: str, raw: float, threshold: float, feedback: str) -> str:
    ok = raw >= threshold
    text = f"{label} {raw:.3g} {'>=' if ok else '<'} threshold {threshold:g}"
    if feedback:
        text += f": {shorten(feedback, 300)}"
    return text


def shorten(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- scales and weights -----------------------------------------------------------


class Scale(Params):
    """A criterion's scoring scale; scores are normalised to [0, 1] on it."""

    min: float = 0.0
    max: float = 1.0
    # Seed 000: what a score means, keyed by the score ({"1": "poor", "5": "excellent"}).
    descriptions: dict[int | float | str, str] = {}

    @model_validator(mode="after")
    def _ordered(self) -> "Scale":
        if not self.max > self.min:
            raise ValueError(f"scale max ({self.max:g}) must be greater than min ({self.min:g})")
        return self

    def normalise(self, value: float) -> float:
        return (value - self.min) / (self.max - self.min)

    def describe(self) -> str:
        text = f"scale {self.min:g} to {self.max:g}"
        if self.descriptions:
            text += "; " + "; ".join(f"{k}: {v}" for k, v in self.descriptions.items())
        return text


def weighted_mean(scores: Mapping[str, float], weights: Mapping[str, float]) -> float:
    total = sum(weights[k] for k in scores)
    if total <= 0:
        return sum(scores.values()) / len(scores) if scores else 0.0
    return sum(scores[k] * weights[k] for k in scores) / total


# -- prompt text ------------------------------------------------------------------


def render(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` for exactly the names in ``values``, in one pass."""
    if not values:
        return template
    pattern = re.compile(r"\{(" + "|".join(re.escape(n) for n in values) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def mentions(template: str, name: str) -> bool:
    return "{" + name + "}" in template


def input_text(case: "TestCase") -> str:
    """The case's input as the judge reads it (roles shown only for conversations)."""
    if all(m.role == "user" for m in case.input):
        return "\n\n".join(m.content for m in case.input)
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in case.input)


def expected_text(case: "TestCase") -> str:
    return as_text(case.expected_output) if case.expected_output is not None else ""


def case_block(case: "TestCase", output: str, criteria: str | None,
               criteria_label: str = "Criteria") -> str:
    """The standard sections for a prompt that does not place the output itself."""
    parts = [f"## Input Given to System\n{input_text(case)}", f"## System Output\n{output}"]
    expected = expected_text(case)
    if expected:
        parts.append(f"## Expected Output (Reference)\n{expected}")
    if criteria:
        parts.append(f"## {criteria_label}\n{criteria}")
    return "\n\n".join(parts)


def with_format(user: str, response_format: str) -> str:
    return f"{user.rstrip()}\n\n## Response Format\n{response_format}"


def resolve_prompt(prompt: str, suite_dir: Any) -> tuple[str, str | None]:
    """(template, file it came from or None).

    A one-line value ending in .md/.txt/.prompt is a file path, relative to the
    suite directory (``file://`` prefix allowed); anything else is an inline
    template. A path that does not exist raises ``FileNotFoundError`` rather than
    being sent to the judge as the prompt text.
    """
    from pathlib import Path

    candidate = prompt.strip()
    if candidate.startswith("file://"):
        candidate = candidate[len("file://"):]
    if "\n" in candidate or not candidate.lower().endswith(PROMPT_SUFFIXES):
        return prompt, None
    path = Path(candidate).expanduser()
    if not path.is_absolute():
        path = (Path(suite_dir) if suite_dir is not None else Path.cwd()) / path
    if not path.is_file():
        raise FileNotFoundError(f"prompt file {candidate!r} not found (looked for {path})")
    return path.read_text(encoding="utf-8"), str(path)


# -- reply checking ---------------------------------------------------------------


def number(value: Any, what: str) -> float:
    """A finite number from a JSON value (numeric strings allowed, booleans not)."""
    if isinstance(value, bool) or value is None:
        raise ReplyInvalid(f"{what} must be a number, got {json.dumps(value)}")
    if isinstance(value, (int, float)):
        result = float(value)
    elif isinstance(value, str):
        try:
            result = float(value.strip())
        except ValueError:
            raise ReplyInvalid(f"{what} must be a number, got {json.dumps(value)}") from None
    else:
        raise ReplyInvalid(f"{what} must be a number, got {json.dumps(value)}")
    if not math.isfinite(result):
        raise ReplyInvalid(f"{what} must be a finite number, got {value!r}")
    return result


def in_range(value: Any, lo: float, hi: float, what: str) -> float:
    result = number(value, what)
    if not lo <= result <= hi:
        raise ReplyInvalid(f"{what} must be between {lo:g} and {hi:g}, got {result:g}")
    return result


def first_key(data: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in data:
            return data[name]
    return None


def feedback_of(data: Mapping[str, Any]) -> str:
    """The judge's explanation, from whichever of the usual keys it used."""
    parts: list[str] = []
    for key in ("reasoning", "justification", "explanation", "reason", "feedback", "overall_feedback"):
        value = data.get(key)
        if isinstance(value, str) and value.strip() and value.strip() not in parts:
            parts.append(value.strip())
    specific = data.get("specific_feedback")
    if isinstance(specific, list):
        parts.extend(f"- {item}" for item in specific if str(item).strip())
    elif isinstance(specific, str) and specific.strip():
        parts.append(specific.strip())
    return "\n".join(parts)


def judge_passed(data: Mapping[str, Any]) -> bool | None:
    value = data.get("passed")
    return value if isinstance(value, bool) else None


def score_0_1(data: Mapping[str, Any]) -> float:
    """``score`` (or ``overall_score``) in [0, 1]."""
    value = first_key(data, "score", "overall_score")
    if value is None:
        raise ReplyInvalid('the reply has no "score"')
    return in_range(value, 0.0, 1.0, '"score"')


# -- the call -------------------------------------------------------------------


async def ask(
    judge: "Judge",
    system: str,
    user: str,
    parse: Callable[[dict[str, Any]], T],
    *,
    temperature: float | None,
    max_attempts: int = MAX_ATTEMPTS,
) -> Asked[T]:
    """One judgment: call, check with ``parse``, re-ask with the error when it raises
    :class:`ReplyInvalid`. Raises :class:`JudgeFailure` when no reply is usable."""
    from eval_pipelines.grading.judge import JudgeError

    attempts, calls, latency, cost = 0, 0, 0.0, 0.0
    prompt = user
    last_error, last_raw = "", ""
    for _ in range(max(1, max_attempts)):
        calls += 1
        try:
            reply = await judge.complete_json(system, prompt, temperature=temperature,
                                              max_attempts=max_attempts)
        except JudgeError as exc:
            raise JudgeFailure(str(exc), attempts + 1) from None
        attempts += reply.attempts
        latency += reply.latency_ms
        cost += reply.cost_usd or 0.0
        try:
            value = parse(reply.data)
        except ReplyInvalid as exc:
            last_error, last_raw = str(exc), reply.raw
            prompt = (f"{user}\n\n## Your previous reply was rejected\n{last_error}.\n"
                      f"Previous reply: {shorten(last_raw, 1000)}\n"
                      "Answer again with only the JSON object in the required format.")
            continue
        return Asked(value, reply, attempts, calls, latency, cost)
    raise JudgeFailure(f"judge reply not usable after {calls} replies ({last_error}); "
                       f"last reply: {shorten(last_raw, 300)!r}", attempts)


# -- agent runs: what skill-creator's grader reads ---------------------------------

# The transcript shown to the judge is cut at this many characters (its head: how the run went),
# and each output file's text at MAX_JUDGE_FILE_CHARS, all files together at MAX_JUDGE_FILES_CHARS.
MAX_JUDGE_TRANSCRIPT_CHARS = 20_000
MAX_JUDGE_FILE_CHARS = 20_000
MAX_JUDGE_FILES_CHARS = 60_000


def _transcript_line(item: dict[str, Any]) -> str:
    step = f"[{item.get('step', 0)}]"
    if item.get("kind") == "tool_call":
        return f"{step} assistant calls {item.get('tool')} {item.get('args', '')}"
    if item.get("kind") in ("tool_result", "retry"):
        return f"{step} {item.get('tool') or 'tool'} returned: {item.get('text', '')}"
    return f"{step} {item.get('role')}: {item.get('text', '')}"


def agent_evidence(inp: Any) -> str:
    """An agent run's transcript and output files as prompt sections ("" for other outputs), as
    skill-creator's grader reads the transcript and the outputs folder, not only the answer."""
    if not inp.transcript and not inp.files:
        return ""
    parts = []
    if inp.transcript:
        # The system instructions are the harness's, not the run's: left out.
        text = "\n".join(_transcript_line(i) for i in inp.transcript if i.get("kind") != "instructions")
        if len(text) > MAX_JUDGE_TRANSCRIPT_CHARS:
            text = text[:MAX_JUDGE_TRANSCRIPT_CHARS] + f"\n... (transcript cut at {MAX_JUDGE_TRANSCRIPT_CHARS} characters)"
        parts.append(f"## Agent Transcript\n{text}")
    if inp.files:
        budget, blocks = MAX_JUDGE_FILES_CHARS, []
        for f in inp.files:
            head = f"### {f.get('path')} ({f.get('status', 'created')}, {f.get('size')} bytes)"
            if f.get("text") is None:
                blocks.append(f"{head}\n(binary file, sha256 {f.get('sha256')})")
                continue
            body = f["text"][:min(MAX_JUDGE_FILE_CHARS, max(budget, 0))]
            budget -= len(body)
            cut = len(body) < len(f["text"]) or f.get("truncated")
            blocks.append(f"{head}\n{body}" + ("\n... (cut)" if cut else ""))
        parts.append("## Files the Agent Wrote\n" + "\n\n".join(blocks))
    else:
        parts.append("## Files the Agent Wrote\n(none)")
    return "\n\n".join(parts)


def judged_output(inp: Any) -> str:
    """The output as the judge reads it: the answer, then an agent run's transcript and files."""
    evidence = agent_evidence(inp)
    if not evidence:
        return inp.output
    return f"Final answer:\n{inp.output}\n\n{evidence}"
