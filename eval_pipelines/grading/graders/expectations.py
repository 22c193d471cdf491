"""``expectations`` (skill-creator's grading): each statement passed or failed, with evidence.

An Agent Skills ``evals/evals.json`` eval lists ``expectations``, statements about a good run.
skill-creator's grader (``agents/grader.md``) gives each one ``{"text", "passed", "evidence"}``
in ``grading.json`` and its ``pass_rate`` is passed / total. This grader asks the judge for all
of a case's expectations in ONE call (one call per expectation would repeat the input, the
output and the agent's transcript and files once per statement: with the 5-15 expectations real
evals carry, that is 5-15 times the tokens for the same reading), and the reply is
skill-creator's shape::

    {"expectations": [{"text": "...", "passed": true, "evidence": "..."}, ...]}

one item per expectation, in the order asked. The score is the share passed (skill-creator's
``pass_rate``); the assertion passes only when every expectation passed (grader.md: "the burden
of proof to pass is on the expectation"), which makes the case's verdict "all expectations met"
(evals.json suites score with ``all_pass``). ``details.expectations`` keeps each item (our text,
the judge's verdict and evidence); the view ``expectation_results`` reads it.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from eval_pipelines.grading.graders import _judging as J
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

INSTRUCTIONS = (
    "Decide for each expectation below, independently, whether the system's run meets it. "
    "PASS needs clear evidence in the output (or the agent's transcript and files) that the "
    "expectation holds and reflects genuine task completion; when it cannot be verified from "
    "what is shown, it FAILS: the burden of proof is on the expectation. Quote or describe the "
    "evidence for each verdict."
)


class ExpectationsParams(Params):
    items: list[str] = Field(min_length=1)
    temperature: float | None = Field(default=0, ge=0, le=2)


def judge_prompt(params: ExpectationsParams, inp: GradeInput) -> str:
    """The one request per case: the case's sections, the numbered expectations, the reply format."""
    listed = "\n".join(f"{i + 1}. {text}" for i, text in enumerate(params.items))
    body = (INSTRUCTIONS + "\n\n" + J.case_block(inp.case, J.judged_output(inp), None)
            + "\n\n## Expectations\n" + listed)
    return J.with_format(body, (
        'Respond with only a JSON object: {"expectations": [{"text": "<the expectation>", '
        '"passed": true|false, "evidence": "<quote or description>"}, ...]} with one item per '
        f"expectation, in the order listed ({len(params.items)} items)."))


def parse_reply(params: ExpectationsParams, data: dict[str, Any]) -> list[dict[str, Any]]:
    items = data.get("expectations")
    if not isinstance(items, list):
        raise J.ReplyInvalid('the reply has no "expectations" list')
    if len(items) != len(params.items):
        raise J.ReplyInvalid(f'"expectations" has {len(items)} items, {len(params.items)} were asked')
    graded = []
    for index, (text, item) in enumerate(zip(params.items, items), start=1):
        if not isinstance(item, dict) or not isinstance(item.get("passed"), bool):
            raise J.ReplyInvalid(f'expectation {index} has no boolean "passed"')
        evidence = item.get("evidence")
        graded.append({"text": text, "passed": item["passed"],
                       "evidence": evidence if isinstance(evidence, str) else ""})
    return graded


class Expectations(Grader[ExpectationsParams]):
    type = "expectations"
    group = "model-graded"  # section of docs/assertions.md
    score_range = "0..1"
    needs_judge = True
    Params = ExpectationsParams

    async def agrade(self, params: ExpectationsParams, inp: GradeInput) -> Outcome:
        judge = inp.judge
        if judge is None:
            return J.no_judge()
        try:
            asked = await J.ask(judge, J.SYSTEM_PROMPT, judge_prompt(params, inp),
                                lambda d: parse_reply(params, d), temperature=params.temperature)
        except J.JudgeFailure as exc:
            return J.failure(judge, exc)
        graded = asked.value
        passed = sum(item["passed"] for item in graded)
        total = len(graded)
        details: dict[str, Any] = {
            "expectations": graded, "passed": passed, "failed": total - passed, "total": total,
            "pass_rate": round(passed / total, 4), **J.judge_details(judge, asked),
        }
        failing = [f"{i}. {J.shorten(item['text'], 80)}" for i, item in enumerate(graded, start=1)
                   if not item["passed"]]
        reason = f"{passed}/{total} expectations met" + (f"; failed: {'; '.join(failing)}" if failing else "")
        return Outcome(passed / total, reason, details, passed=passed == total)
