"""``meteor`` (promptfoo's ``meteor``, src/assertions/meteor.ts): METEOR of the output against
``value`` (one reference or a list; the best reference counts).

As promptfoo's ``calculateMeteorScore``: each text is split on whitespace (not trimmed) with
trailing periods cut from each word, then lower-cased. Words are aligned in stages, each over
the words the earlier stages left, scanning the output's words from the last and taking the
last equal reference word: (1) exact matches, (2) matches of their Porter stems. Then, with
m matches, P = m / output words, R = m / reference words, Fmean = P·R / (α·P + (1 − α)·R),
chunks = runs of matches adjacent in both texts (sorted by output position), penalty =
γ·(chunks / m)^β, and the score is (1 − penalty)·Fmean; 0 without matches. Defaults
α = 0.9, β = 3, γ = 0.5, ``threshold`` 0.5 (promptfoo's).

Not done here: promptfoo's third stage, WordNet synonym matching (natural's WordNet, whose
database this project does not ship). A word that only a synonym would match stays
unmatched, so a score can be lower than promptfoo's, never higher; the loader stores a
warning saying so for every promptfoo ``meteor`` assertion. The stems come from Snowball's
implementation of the original Porter algorithm (``snowballstemmer``), the algorithm natural's
``PorterStemmer`` implements.

Passes when METEOR reaches ``threshold``; negated (``not-meteor``) it passes below it. The
grade score is the METEOR score, its calibrated score ``_judging.calibrate(meteor, threshold)``.
An empty output is an ``error`` grade (promptfoo throws "Invalid inputs").
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._judging import calibrate

Word = tuple[int, str]


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - snowballstemmer has no types
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


def _words(text: str) -> list[str]:
    return [re.sub(r"\.+$", "", word).lower() for word in re.split(r"\s+", text)]


def _match(candidate: list[Word], reference: list[Word]) -> tuple[list[tuple[int, int]], list[Word], list[Word]]:
    """promptfoo's ``matchExactEnums``: from the last output word, the last equal reference word."""
    matches, cand, ref = [], list(candidate), list(reference)
    for i in range(len(cand) - 1, -1, -1):
        for j in range(len(ref) - 1, -1, -1):
            if cand[i][1] == ref[j][1]:
                matches.append((cand[i][0], ref[j][0]))
                del cand[i], ref[j]
                break
    return matches, cand, ref


def _chunks(matches: list[tuple[int, int]]) -> int:
    return 0 if not matches else 1 + sum(
        1 for a, b in zip(matches, matches[1:]) if b[0] != a[0] + 1 or b[1] != a[1] + 1)


def meteor_single(reference: list[str], candidate: list[str], alpha: float = 0.9, beta: float = 3.0,
                  gamma: float = 0.5) -> float:
    cand = list(enumerate(candidate))
    ref = list(enumerate(reference))
    exact, cand_left, ref_left = _match(cand, ref)
    stem = _stemmer().stemWord
    stemmed, _, _ = _match([(i, stem(w)) for i, w in cand_left], [(j, stem(w)) for j, w in ref_left])
    matches = sorted(exact + stemmed, key=lambda pair: pair[0])
    if not matches or not cand or not ref:
        return 0.0
    precision, recall = len(matches) / len(cand), len(matches) / len(ref)
    denominator = alpha * precision + (1 - alpha) * recall
    if denominator == 0:
        return 0.0
    fmean = precision * recall / denominator
    penalty = gamma * (_chunks(matches) / len(matches)) ** beta
    return (1 - penalty) * fmean


def meteor(candidate: str, references: list[str], alpha: float = 0.9, beta: float = 3.0,
           gamma: float = 0.5) -> float:
    """The best METEOR over ``references``; ``ValueError`` on an empty output or no reference."""
    if not candidate or not references:
        raise ValueError("METEOR needs a non-empty output and at least one reference (promptfoo: Invalid inputs)")
    return max(meteor_single(_words(r), _words(candidate), alpha, beta, gamma) for r in references)


class MeteorParams(Params):
    value: str | list[str] = Field(min_length=1)
    threshold: float = Field(default=0.5, ge=0, le=1)
    alpha: float = Field(default=0.9, ge=0, le=1)
    beta: float = Field(default=3.0, ge=0)
    gamma: float = Field(default=0.5, ge=0, le=1)


class Meteor(Grader[MeteorParams]):
    type = "meteor"
    group = "deterministic text"  # section of docs/assertions.md
    Params = MeteorParams

    def grade(self, params: MeteorParams, inp: GradeInput) -> Outcome:
        references = [params.value] if isinstance(params.value, str) else params.value
        try:
            score = meteor(inp.output, references, params.alpha, params.beta, params.gamma)
        except ValueError as exc:
            return Outcome(0.0, str(exc), status="error")
        passed = score >= params.threshold
        return Outcome(score,
                       f"METEOR {score:.4f} {'>=' if passed else '<'} threshold {params.threshold:g} "
                       "(exact and stem matches; no WordNet synonyms)",
                       {"meteor": score, "threshold": params.threshold, "passed": passed,
                        "stages": ["exact", "stem"]}, passed=passed,
                       calibrated=calibrate(score, params.threshold))
