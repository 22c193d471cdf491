"""Reference-based text metrics of promptfoo (not a grader module): Levenshtein distance,
ROUGE-N recall and BLEU-4, written from promptfoo's descriptions (expected-outputs docs)."""

from __future__ import annotations

import math
import re
from collections import Counter

_TOKEN = re.compile(r"\w+|[^\w\s]")


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions), O(len(a) * len(b)) time, O(len(b)) memory."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """ROUGE-N recall: the share of the reference's n-grams (clipped counts) found in the candidate."""
    ref = _ngrams(_TOKEN.findall(reference), n)
    if not ref:
        return 0.0
    cand = _ngrams(_TOKEN.findall(candidate), n)
    return sum(min(count, cand[gram]) for gram, count in ref.items()) / sum(ref.values())


def bleu(candidate: str, references: list[str], max_n: int = 4) -> float:
    """promptfoo's BLEU (src/assertions/bleu.ts): lower-cased whitespace tokens; for n = 1..4
    the clipped n-gram matches of the best single reference over the candidate's n-grams;
    a zero precision smoothed to 1e-7; equal weights; brevity penalty against the reference
    closest in length (the first on a tie). Raises ``ValueError`` on an empty candidate."""
    cand = candidate.lower().split()
    if not candidate or not references:
        raise ValueError("BLEU needs a non-empty output and at least one reference")
    refs = [r.lower().split() for r in references]
    closest = len(refs[0])
    for ref in refs[1:]:
        if abs(len(ref) - len(cand)) < abs(closest - len(cand)):
            closest = len(ref)
    total_log = 0.0
    for n in range(1, max_n + 1):
        counts = _ngrams(cand, n)
        total = sum(counts.values())
        best = 0
        for ref in refs:
            ref_counts = _ngrams(ref, n)
            best = max(best, sum(min(c, ref_counts[g]) for g, c in counts.items()))
        precision = best / total if total else 0.0
        total_log += (1 / max_n) * math.log(precision or 1e-7)
    penalty = 1.0 if len(cand) > closest else math.exp(1 - closest / max(len(cand), 1))
    return penalty * math.exp(total_log)
