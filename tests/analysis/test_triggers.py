"""Trigger metrics (analysis/triggers.py) on planted behaviour."""

from __future__ import annotations

from eval_pipelines.analysis.triggers import QueryRuns, query_passes, trigger_summary


def test_planted_trigger_behaviour_gives_the_planted_precision_and_recall() -> None:
    # 9 of 10 should-trigger queries load the skill (3 of 3 runs), 1 of 10 should-not queries does.
    queries = ([QueryRuns(f"yes {i}", True, 3, 3 if i < 9 else 0) for i in range(10)]
               + [QueryRuns(f"no {i}", False, 3, 3 if i < 1 else 0) for i in range(10)])
    s = trigger_summary(queries)
    assert (s.true_positives, s.false_positives, s.false_negatives, s.true_negatives) == (9, 1, 1, 9)
    assert s.precision == 0.9 and s.recall == 0.9 and s.accuracy == 0.9 and s.passed_queries == 18


def test_a_query_triggers_at_half_of_its_runs_as_skill_creator_counts_it() -> None:
    assert query_passes(QueryRuns("q", True, 4, 2)) and not query_passes(QueryRuns("q", True, 3, 1))
    assert query_passes(QueryRuns("q", False, 3, 1)) and not query_passes(QueryRuns("q", False, 2, 1))


def test_no_triggering_query_leaves_precision_undefined_not_zero() -> None:
    s = trigger_summary([QueryRuns("q", True, 3, 0), QueryRuns("r", False, 3, 0)])
    assert s.precision is None and s.recall == 0.0 and s.accuracy == 0.5
