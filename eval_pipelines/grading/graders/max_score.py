"""``max_score`` (promptfoo's ``max-score``): the output whose other assertions score highest wins.

As promptfoo's ``selectMaxScore`` (src/matchers): after every output of a test exists (its
prompts x providers, one trial), each output's score is the mean (``method: average``) or
the sum (``method: sum``) of its other assertions' scores (select_best and max_score left
out), weighted by ``weights`` (by assertion type as written, default 1: the docs' ``sum(score x
weight) / sum(weights)``); the highest wins, the first on a tie (outputs ordered by prompt, then provider). The
winner scores 1 and passes, unless ``threshold`` is set and its score is below it; the
others score 0. The scores read are our stored grade scores, as the graders gave them
(promptfoo's raw scores; the calibrated ones are apart, see docs/promptfoo.md).
``details`` keep each output's ``aggregate``, the ``max`` and the number of assertions counted.
"""

from __future__ import annotations

from typing import Literal, Sequence

from eval_pipelines.grading.base import CompareItem, Grader, GradeInput, Outcome, Params

COMPARED = {"select_best", "max_score"}


class MaxScoreParams(Params):
    method: Literal["average", "sum"] = "average"
    threshold: float | None = None
    # promptfoo's weights by assertion type (default 1), and the test's assertion types by position
    # (filled by the loader), which is how a grade's type as written is known.
    weights: dict[str, float] = {}
    assertion_types: list[str] = []


class MaxScore(Grader[MaxScoreParams]):
    type = "max_score"
    group = "composite"
    score_range = "0 or 1"
    compares = True
    Params = MaxScoreParams

    def grade(self, params: MaxScoreParams, inp: GradeInput) -> Outcome:
        return Outcome(0.0, "max_score compares all outputs of a test (its prompts x providers); it cannot "
                       "grade one output on its own (inside assert-set, a transform or an early verdict)",
                       status="error")

    async def acompare(self, params: MaxScoreParams, items: Sequence[CompareItem]) -> list[Outcome]:
        n = len(items)
        if n < 2:
            return [Outcome(0.0, f"max_score needs at least two outputs of the test to compare, got {n}",
                            {"group_size": n}, status="error")] * n
        aggregates: list[float] = []
        counts: list[int] = []
        for item in items:
            scored = [(g.score, self._weight(params, g.assertion_index))
                      for g in item.grades if g.assertion_type not in COMPARED]
            if not scored:
                return [Outcome(0.0, "max_score needs at least one other assertion to aggregate scores from",
                                status="error")] * n
            total, weight = sum(s * w for s, w in scored), sum(w for _, w in scored)
            if params.method == "average" and weight == 0:
                return [Outcome(0.0, "max_score: the weights of the assertions it aggregates are all 0",
                                status="error")] * n
            aggregates.append(total if params.method == "sum" else total / weight)  # promptfoo's docs: sum(s*w)/sum(w)
            counts.append(len(scored))
        best = max(aggregates)
        winner = aggregates.index(best)  # the first on a tie
        meets = params.threshold is None or best >= params.threshold
        out = []
        for i, score in enumerate(aggregates):
            details = {"aggregate": round(score, 6), "max": round(best, 6), "assertion_count": counts[i],
                       "method": params.method, "group_size": n, "position": i}
            if i == winner and meets:
                out.append(Outcome(1.0, f"Selected as highest scoring output (score: {score:.3f})", details))
            elif i == winner:
                out.append(Outcome(0.0, f"Not selected - score {score:.3f} below threshold {params.threshold}",
                                   details))
            else:
                out.append(Outcome(0.0, f"Not selected (score: {score:.3f}, max: {best:.3f})", details))
        return out

    @staticmethod
    def _weight(params: MaxScoreParams, index: int) -> float:
        kind = params.assertion_types[index] if index < len(params.assertion_types) else None
        return params.weights.get(kind, 1.0) if kind is not None else 1.0
