"""``composite`` (seed 001) and ``hybrid`` (seed 000): nested assertions, one score.

The inner list is ``assert`` (as in 001); children are validated like any
assertion when the suite loads. Aggregators: ``weighted_average`` (weights by
child ``name``; children without one weigh 1), ``min``, ``max``, ``all`` (1 when
every child passes), ``any``, a ``code_judge`` script that receives the
children's results in ``config.results`` and answers like any code judge
(AgentV spells its command ``path``), ``llm_judge`` (AgentV: the judge reads
``prompt`` and the children's results and gives the score) or ``threshold``
(AgentV: 1 when at least ``threshold`` of the children pass, else the share
that passed). AgentV's ``assertions:`` for the children is read as ``assert``.
Inner weights stay inside: the composite is one score to the outer model.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from eval_pipelines.grading.base import Grade, Grader, GradeInput, Outcome, Params, decided_score


class Aggregator(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["weighted_average", "min", "max", "all", "any", "code_judge", "llm_judge",
                  "threshold"] = "weighted_average"
    weights: dict[str, float] = {}
    script: str | None = None
    command: str | list[str] | None = None
    timeout_ms: int = 30_000
    # llm_judge: the judge's instructions (text or a prompt file), given the children's results.
    prompt: str | None = None
    # threshold: the share of children that must pass.
    threshold: float | None = Field(default=None, ge=0, le=1)

    @model_validator(mode="before")
    @classmethod
    def _agentv_names(cls, raw: Any) -> Any:
        if isinstance(raw, dict) and isinstance(raw.get("type"), str):
            raw = {**raw, "type": raw["type"].replace("-", "_")}  # AgentV's code-judge, llm-judge
        return raw

    @model_validator(mode="after")
    def _fields_for_type(self) -> "Aggregator":
        if self.type == "code_judge" and not (self.script or self.command):
            raise ValueError("a code_judge aggregator needs `script` or `command` (AgentV: `path`)")
        if self.type == "llm_judge" and not self.prompt:
            raise ValueError("an llm_judge aggregator needs a `prompt`")
        if self.type == "threshold" and self.threshold is None:
            raise ValueError("a threshold aggregator needs `threshold` (the share of children that must pass)")
        return self


class CompositeParams(Params):
    assert_: list[dict[str, Any]] = Field(alias="assert")
    aggregator: Aggregator | Literal["weighted_average", "min", "max", "all", "any"] = Aggregator()

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @field_validator("assert_")
    @classmethod
    def _children_present(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Each child is validated like any assertion by the loader (Grader.nested_assertions),
        # with its own line number; here only what concerns the list as a whole.
        if not value:
            raise ValueError("a composite needs at least one nested assertion in `assert`")
        names = [item.get("name") for item in value if isinstance(item, dict) and item.get("name")]
        if len(names) != len(set(names)):
            raise ValueError("nested assertion names must be unique")
        return value

    @model_validator(mode="after")
    def _weights_name_children(self) -> "CompositeParams":
        # A weight for a child that does not exist would silently weigh nothing.
        labels = {str(item.get("name") or item.get("type")) for item in self.assert_ if isinstance(item, dict)}
        unknown = sorted(set(self.agg.weights) - labels)
        if unknown:
            raise ValueError(f"aggregator weights name {unknown}, which no nested assertion is called; "
                             f"the nested assertions are {sorted(labels)}")
        bad = {k: v for k, v in self.agg.weights.items() if not math.isfinite(v) or v < 0}
        if bad:
            raise ValueError(f"aggregator weights must be finite and at least 0, got {bad}")
        return self

    @property
    def agg(self) -> Aggregator:
        return self.aggregator if isinstance(self.aggregator, Aggregator) else Aggregator(type=self.aggregator)


class Composite(Grader[CompositeParams]):
    type = "composite"
    group = "composite"  # section of docs/assertions.md
    score_range = "0..1"
    aliases = ("hybrid", "group")
    Params = CompositeParams

    def grade(self, params: CompositeParams, inp: GradeInput) -> Outcome:  # pragma: no cover
        raise RuntimeError("composite is graded asynchronously")

    def nested_assertions(self, params: CompositeParams) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(("assert", i), raw) for i, raw in enumerate(params.assert_)]

    async def agrade(self, params: CompositeParams, inp: GradeInput) -> Outcome:
        assert inp.grade_nested is not None  # set by grading.dispatch
        children = [await inp.grade_nested(raw, i) for i, raw in enumerate(params.assert_)]
        results = [{"name": g.assertion_name, "type": g.assertion_type, "score": g.score,
                    "passed": g.passed, "status": g.status, "reason": g.reason} for g in children]
        errored = [g for g in children if g.status == "error"]
        if errored:
            return Outcome(0.0, f"nested {errored[0].assertion_name} failed: {errored[0].reason}",
                           {"children": results}, status="error")
        if any(g.status == "pending_human" for g in children):
            return Outcome(0.0, "waiting for human ratings of a nested assertion", {"children": results},
                           status="pending_human")
        scored = [g for g in children if g.status == "graded"]
        if not scored:
            return Outcome(0.0, "no nested assertion could be evaluated", {"children": results},
                           status="not_evaluated")
        agg = params.agg
        if agg.type == "code_judge":
            return await self._script(agg, results, inp)
        if agg.type == "llm_judge":
            return await self._judge(agg, results, inp)
        if agg.type == "threshold":
            share = sum(1 for g in scored if g.passed) / len(scored)
            ok = share >= (agg.threshold or 0.0)
            return Outcome(1.0 if ok else share,
                           f"{share:.0%} of {len(scored)} nested assertions passed "
                           f"({'>=' if ok else '<'} threshold {agg.threshold:g})",
                           {"children": results, "aggregator": "threshold", "passed_share": share})
        gate_failures = [g.assertion_name for g in scored
                         if g.required is not False and not g.passed]
        if agg.type == "weighted_average":
            weights = [agg.weights.get(g.assertion_name, g.weight) for g in scored]
            total = sum(weights)
            score = sum(g.score * w for g, w in zip(scored, weights)) / total if total else 0.0
        elif agg.type == "min":
            score = min(g.score for g in scored)
        elif agg.type == "max":
            score = max(g.score for g in scored)
        elif agg.type == "all":
            score = 1.0 if all(g.passed for g in scored) else 0.0
        else:
            score = 1.0 if any(g.passed for g in scored) else 0.0
        if gate_failures:
            score = 0.0
        reason = f"{agg.type} of {len(scored)} nested assertions = {score:.2f}"
        if gate_failures:
            reason += f"; required nested assertion(s) failed: {', '.join(gate_failures)}"
        return Outcome(score, reason, {"children": results, "aggregator": agg.type},
                       calibrated=None if gate_failures else _calibrated_aggregate(agg, scored))

    async def _judge(self, agg: Aggregator, results: list[dict[str, Any]], inp: GradeInput) -> Outcome:
        """AgentV's llm_judge aggregator: the judge reads the children's results and gives one score."""
        from eval_pipelines.grading.graders._judging import resolve_prompt

        assert inp.grade_nested is not None and agg.prompt is not None
        try:
            template, _ = resolve_prompt(agg.prompt, inp.suite_dir)
        except OSError as exc:
            return Outcome(0.0, f"aggregator prompt: {exc}", {"children": results}, status="error")
        prompt = (template.rstrip() + "\n\n## Results of the Nested Assertions\n"
                  + json.dumps(results, indent=2, default=str) + "\n\n## System Output\n{output}")
        grade = await inp.grade_nested({"type": "llm_judge", "name": "aggregator", "prompt": prompt}, 0)
        return Outcome(grade.score, f"aggregator judge: {grade.reason}",
                       {"children": results, "aggregator": "llm_judge", "judge": grade.details},
                       status=grade.status, calibrated=grade.calibrated_score)

    async def _script(self, agg: Aggregator, results: list[dict[str, Any]], inp: GradeInput) -> Outcome:
        assert inp.grade_nested is not None
        raw: dict[str, Any] = {"type": "code_judge", "name": "aggregator", "config": {"results": results},
                               "timeout_ms": agg.timeout_ms}
        if agg.script:
            raw["script"] = agg.script
        else:
            raw["command"] = agg.command
        grade = await inp.grade_nested(raw, 0)
        return Outcome(grade.score, f"aggregator script: {grade.reason}",
                       {"children": results, "aggregator": "code_judge", "script": grade.details},
                       status=grade.status, calibrated=grade.calibrated_score)


def _calibrated_aggregate(agg: Any, scored: list[Grade]) -> float | None:
    """The same aggregate of the children's calibrated scores (what their verdicts were decided
    on), when a child has one: the composite's verdict then agrees with its children's thresholds,
    while its score stays the aggregate of the scores they gave."""
    if agg.type not in ("weighted_average", "min", "max") or all(g.calibrated_score is None for g in scored):
        return None
    values = [decided_score(g) for g in scored]
    if agg.type == "min":
        return min(values)
    if agg.type == "max":
        return max(values)
    weights = [agg.weights.get(g.assertion_name, g.weight) for g in scored]
    total = sum(weights)
    return sum(v * w for v, w in zip(values, weights)) / total if total else 0.0
