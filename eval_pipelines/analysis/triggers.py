"""Trigger evaluation of a skill's description: does the agent load the skill when it should?

A trigger set is a list of queries marked ``should_trigger`` (skill-creator's trigger evals).
Each query is run ``runs`` times with the skill offered among others by name and description
only; a run *triggered* when the agent loaded the skill. As in skill-creator's ``run_eval.py``,
a query counts as triggering when its trigger rate reaches ``threshold`` (0.5), and it passes
when that matches ``should_trigger``. Precision, recall and accuracy are over queries:
precision = triggering should-trigger queries / all triggering queries, recall = triggering
should-trigger queries / all should-trigger queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class QueryRuns:
    query: str
    should_trigger: bool
    runs: int
    triggered: int

    @property
    def trigger_rate(self) -> float:
        return self.triggered / self.runs if self.runs else 0.0


@dataclass(frozen=True)
class TriggerSummary:
    queries: int
    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int
    precision: float | None  # None when no query triggered
    recall: float | None  # None when no query should trigger
    accuracy: float
    threshold: float

    @property
    def passed_queries(self) -> int:
        return self.true_positives + self.true_negatives


def query_passes(q: QueryRuns, threshold: float = DEFAULT_THRESHOLD) -> bool:
    return (q.trigger_rate >= threshold) == q.should_trigger


def trigger_summary(queries: Sequence[QueryRuns], threshold: float = DEFAULT_THRESHOLD) -> TriggerSummary:
    ran = [q for q in queries if q.runs]
    fired = [q for q in ran if q.trigger_rate >= threshold]
    tp = sum(q.should_trigger for q in fired)
    fp = len(fired) - tp
    fn = sum(q.should_trigger for q in ran if q not in fired)
    tn = len(ran) - tp - fp - fn
    positives = tp + fn
    return TriggerSummary(
        queries=len(ran), true_positives=tp, false_positives=fp, false_negatives=fn, true_negatives=tn,
        precision=tp / len(fired) if fired else None, recall=tp / positives if positives else None,
        accuracy=(tp + tn) / len(ran) if ran else 0.0, threshold=threshold)
