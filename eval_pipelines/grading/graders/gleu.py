"""``gleu`` (promptfoo's ``gleu``, src/assertions/gleu.ts): Google-BLEU of the output against
``value`` (one reference or a list; the best reference counts).

Computed as promptfoo's ``calculateGleuScore``: both texts lower-cased, trimmed, split on
whitespace, trailing periods cut from each word; identical word lists score 1; otherwise the
n-grams of orders 1 to 4 are counted over all orders together, matches clipped to the smaller
count, and the score is min(matches / candidate n-grams, matches / reference n-grams), 0 when
either text has none. An empty (or whitespace-only) output scores 0.

Passes when GLEU reaches ``threshold`` (default 0.5, promptfoo's); negated (``not-gleu``) it
passes below it. The grade score is the GLEU score, its calibrated score
``_judging.calibrate(gleu, threshold)``.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._judging import calibrate


def _words(text: str) -> list[str]:
    return [re.sub(r"\.+$", "", word) for word in re.split(r"\s+", text.lower().strip())]


def _ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)] if 0 < n <= len(words) else []


def gleu(candidate: str, references: list[str], min_n: int = 1, max_n: int = 4) -> float:
    """promptfoo's GLEU: the best over ``references``; ``ValueError`` without a reference."""
    if not references:
        raise ValueError("GLEU needs at least one reference")
    if not candidate.strip():
        return 0.0
    cand = _words(candidate)
    scores = []
    for reference in references:
        ref = _words(reference)
        if cand == ref:
            scores.append(1.0)
            continue
        matches = cand_total = ref_total = 0
        for n in range(min_n, max_n + 1):
            cand_grams, ref_grams = _ngrams(cand, n), _ngrams(ref, n)
            ref_counts = Counter(ref_grams)
            matches += sum(min(count, ref_counts[gram]) for gram, count in Counter(cand_grams).items())
            cand_total += len(cand_grams)
            ref_total += len(ref_grams)
        scores.append(0.0 if not cand_total or not ref_total else min(matches / cand_total, matches / ref_total))
    return max(scores)


class GleuParams(Params):
    value: str | list[str] = Field(min_length=1)
    threshold: float = Field(default=0.5, ge=0, le=1)


class Gleu(Grader[GleuParams]):
    type = "gleu"
    group = "deterministic text"  # section of docs/assertions.md
    Params = GleuParams

    def grade(self, params: GleuParams, inp: GradeInput) -> Outcome:
        references = [params.value] if isinstance(params.value, str) else params.value
        score = gleu(inp.output, references)
        passed = score >= params.threshold
        return Outcome(score, f"GLEU {score:.4f} {'>=' if passed else '<'} threshold {params.threshold:g}",
                       {"gleu": score, "threshold": params.threshold, "passed": passed}, passed=passed,
                       calibrated=calibrate(score, params.threshold))
