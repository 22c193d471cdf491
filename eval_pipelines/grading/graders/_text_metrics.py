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
    """BLEU: geometric mean of clipped n-gram precisions (n = 1..4, equal weights) times the
    brevity penalty, on lower-cased whitespace tokens; 0 when some precision is 0 (no smoothing)."""
    cand = candidate.lower().split()
    refs = [r.lower().split() for r in references]
    if not cand or not refs:
        return 0.0
    logs = []
    for n in range(1, max_n + 1):
        counts = _ngrams(cand, n)
        total = sum(counts.values())
        if total == 0:
            return 0.0
        best: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            best |= _ngrams(ref, n)
        matched = sum(min(c, best[g]) for g, c in counts.items())
        if matched == 0:
            return 0.0
        logs.append(math.log(matched / total))
    closest = min((abs(len(r) - len(cand)), len(r)) for r in refs)[1]
    penalty = 1.0 if len(cand) > closest else math.exp(1 - closest / len(cand))
    return penalty * math.exp(sum(logs) / max_n)
