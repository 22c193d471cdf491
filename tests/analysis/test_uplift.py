"""Skill uplift (analysis/uplift.py): planted effects are found, a planted no-effect is rarely called "helps"."""

from __future__ import annotations

import random

from eval_pipelines.analysis.policy import RegressionPolicy
from eval_pipelines.analysis.uplift import skill_uplift


def _runs(rng: random.Random, cases: int, trials: int, share: float, expectations: int = 5) -> dict[str, list[float]]:
    """Per case, per trial: the share of ``expectations`` met, each met with probability ``share``."""
    return {f"case-{i}": [sum(rng.random() < share for _ in range(expectations)) / expectations
                          for _ in range(trials)] for i in range(cases)}


def test_a_planted_uplift_is_called_helps_with_an_interval_that_excludes_zero() -> None:
    rng = random.Random(7)
    up = skill_uplift(_runs(rng, 20, 3, 0.8), _runs(rng, 20, 3, 0.2))
    assert up is not None and up.verdict == "helps" and up.significant and up.large_enough
    assert up.ci_low > 0 and 0.5 < up.delta < 0.7 and up.cases_compared == 20
    assert up.wording.startswith("helps:")


def test_a_planted_harm_is_called_hurts() -> None:
    rng = random.Random(8)
    up = skill_uplift(_runs(rng, 20, 3, 0.3), _runs(rng, 20, 3, 0.7))
    assert up is not None and up.verdict == "hurts" and up.ci_high < 0


def test_no_effect_is_called_helps_in_at_most_five_percent_of_200_simulated_runs() -> None:
    """The same function the stage calls; figures in docs/skills.md (benchmarks/uplift_power.py)."""
    rng = random.Random(2026)
    verdicts = [skill_uplift(_runs(rng, 20, 3, 0.5), _runs(rng, 20, 3, 0.5)).verdict for _ in range(200)]
    assert verdicts.count("helps") <= 10
    assert verdicts.count("hurts") <= 10


def test_a_small_significant_rise_is_not_called_helps_under_the_margin() -> None:
    same = {f"c{i}": [0.5] * 3 for i in range(40)}
    tiny = {f"c{i}": [0.5 + (0.02 if i % 2 else 0.0)] * 3 for i in range(40)}
    up = skill_uplift(tiny, same, policy=RegressionPolicy(min_effect=0.05, effect_rule="estimate"))
    assert up is not None and up.significant and not up.large_enough and up.verdict == "no_measurable_effect"


def test_only_cases_run_in_both_configurations_are_paired() -> None:
    up = skill_uplift({"a": [1.0], "b": [1.0]}, {"a": [0.0], "c": [0.0]})
    assert up is not None and up.cases_compared == 1
    assert skill_uplift({"a": [1.0]}, {"b": [0.0]}) is None
