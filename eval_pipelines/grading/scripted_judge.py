"""A deterministic stand-in for the judge (targets.yaml ``type: scripted_judge``).

For offline demos and a skill's CI without a model: it answers the rubric requests the graders
send (the criteria and the judged text: answer, transcript, files) by rules, in the same JSON a
model judge returns, so everything after the judge (parsing, scores, evidence, verdicts, reports)
runs as it would with a model. A rule names a phrase of an expectation and what the judged text
must hold for it to pass::

    # judge-script.yaml
    rules:
      - expectation: report.json           # a phrase of the expectation (case-insensitive)
        holds: '"rows": 3'                 # passes when the judged text contains this
      - expectation: validation script
        matches: 'validate\\.py'          # ... or matches this regular expression
    otherwise: fail                        # an expectation no rule names: fail (or pass)

It is no judge of quality: it checks what the rules say, nothing else. Point the suite's judge at
a model (a ``type: openai`` target named ``judge``) to judge for real.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval_pipelines.grading.judge import JudgeReply
from eval_pipelines.suite.errors import SpecErrors, pydantic_errors
from eval_pipelines.suite.source import load_document

# The expectations grader's numbered list (grading/graders/expectations.py) and the rubrics
# grader's criterion lines and reply format (grading/graders/rubrics.py).
EXPECTATIONS = "\n## Expectations\n"
NUMBERED = re.compile(r"^(?P<n>\d+)\. (?P<text>.+)$", re.M)
CRITERION = re.compile(r"^- \*\*(?P<id>[^*]+)\*\* \([^)]*\): (?P<text>.+)$", re.M)
SCALE = re.compile(r'"(?P<id>[^"]+)": <number from (?P<low>-?[\d.]+) to (?P<high>-?[\d.]+)>')


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expectation: str = Field(min_length=1)
    holds: str | None = None
    matches: str | None = None

    @model_validator(mode="after")
    def _one_check(self) -> "Rule":
        if (self.holds is None) == (self.matches is None):
            raise ValueError("a rule has `holds` or `matches` (one of them)")
        if self.matches is not None:
            re.compile(self.matches)
        return self


class JudgeScript(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules: list[Rule] = Field(default_factory=list)
    otherwise: Literal["pass", "fail"] = "fail"


def load_judge_script(path: Path) -> JudgeScript:
    doc = load_document(path)
    try:
        return JudgeScript.model_validate(doc.data)
    except ValidationError as exc:
        raise SpecErrors(pydantic_errors(doc, (), exc)) from None


class ScriptedJudge:
    model = "scripted-judge"
    embeddings_configured = False

    def __init__(self, script: JudgeScript) -> None:
        self.script = script

    def _decide(self, expectation: str, judged: str) -> tuple[bool, str]:
        lowered = expectation.lower()
        for rule in self.script.rules:
            if rule.expectation.lower() in lowered:
                if rule.holds is not None:
                    found = rule.holds in judged
                    return found, f"the output {'holds' if found else 'does not hold'} {rule.holds!r}"
                hit = re.search(rule.matches, judged)
                return bool(hit), (f"found {hit.group(0)!r}" if hit else f"nothing matches /{rule.matches}/")
        return self.script.otherwise == "pass", f"no rule names this expectation: {self.script.otherwise}"

    async def complete_json(self, system: str, user: str, *, temperature: float | None = None,
                            max_attempts: int = 3) -> JudgeReply:
        if EXPECTATIONS in user:  # the expectations grader: one verdict with evidence per statement
            judged, _, listed = user.rpartition(EXPECTATIONS)
            items = []
            for m in NUMBERED.finditer(listed.split("\n\n", 1)[0]):
                passed, evidence = self._decide(m.group("text"), judged)
                items.append({"text": m.group("text"), "passed": passed, "evidence": evidence})
            data = {"expectations": items}
            return JudgeReply(data=data, raw=str(data), attempts=1, latency_ms=0.0, cost_usd=None)
        criteria = [(m.group("id"), m.group("text")) for m in CRITERION.finditer(user)]
        scales = {m.group("id"): (float(m.group("low")), float(m.group("high"))) for m in SCALE.finditer(user)}
        judged = CRITERION.sub("", user)  # the criteria's own words are no evidence
        scores, expectations, reasons = {}, [], []
        for cid, text in criteria:
            passed, evidence = self._decide(text, judged)
            low, high = scales.get(cid, (0.0, 1.0))
            scores[cid] = high if passed else low
            expectations.append({"text": text, "passed": passed, "evidence": evidence})
            reasons.append(f"{cid}: {evidence}")
        data = {"scores": scores, "expectations": expectations, "reasoning": "; ".join(reasons)}
        return JudgeReply(data=data, raw=str(data), attempts=1, latency_ms=0.0, cost_usd=None)

    async def embed(self, texts: list[str], model: str | None = None) -> list[list[float]]:
        raise RuntimeError("the scripted judge has no embeddings")
