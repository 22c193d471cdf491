"""Regression verdicts (`eval_pipelines.analysis.regression.compare`) on synthetic trial results,
and a smoke run of the power simulation's core (`benchmarks/regression_power.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from eval_pipelines.analysis.metrics import TrialResult
from eval_pipelines.analysis.regression import RegressionPolicy, Side, classify, compare
from eval_pipelines.analysis.stats import holm, mcnemar_exact


def trials(test_id: str, passes: int, n: int, target: str = "model-a", status: str = "graded") -> list[TrialResult]:
    """``n`` trials of one case, the first ``passes`` passing."""
    return [TrialResult(test_id, target, i, status, "pass" if i < passes else "fail",
                        1.0 if i < passes else 0.0, None, None, None, None) for i in range(n)]


def suite(spec: dict[str, tuple[int, int]], target: str = "model-a") -> list[TrialResult]:
    """{test_id: (passes, trials)} -> trial results."""
    return [r for test_id, (passes, n) in spec.items() for r in trials(test_id, passes, n, target)]


def changes(result) -> dict[str, str]:
    return {c.test_id: c.change for c in result.cases}


# ---- per case ----------------------------------------------------------------------------

def test_a_case_flaky_on_both_sides_is_flaky_not_regressed() -> None:
    result = compare(suite({"t1": (2, 5)}), suite({"t1": (2, 5)}))
    (case,) = result.cases
    assert case.change == "flaky" and case.pass_rate_delta == 0
    (target,) = result.targets
    assert target.pass_rate_delta == 0 and target.p_value == 1.0 and not target.regressed
    assert target.drivers == [] and not result.regressed


def test_flaky_cases_that_wobble_are_not_regressions() -> None:
    base = suite({f"t{i}": (3, 5) for i in range(6)})
    cur = suite({f"t{i}": (2 if i % 2 else 4, 5) for i in range(6)})
    result = compare(cur, base)
    assert set(changes(result).values()) == {"flaky"}
    assert not result.regressed


def test_a_case_that_passes_5_of_5_then_0_of_5_regressed() -> None:
    result = compare(suite({"t1": (0, 5)}), suite({"t1": (5, 5)}))
    (case,) = result.cases
    assert case.change == "regressed" and case.p_value == pytest.approx(1 / 252)
    assert case.baseline.pass_rate == 1.0 and case.current.pass_rate == 0.0 and case.pass_rate_delta == -1.0


def test_a_partial_drop_without_significance_is_flaky() -> None:
    # 5/5 -> 2/5: Fisher p = 21/252 = 0.083 > 0.05.
    change, p = classify(Side(5, 5, 1.0), Side(5, 2, 0.4), RegressionPolicy())
    assert change == "flaky" and p == pytest.approx(21 / 252)


def test_single_trial_flips() -> None:
    base = suite({"broke": (1, 1), "fixed": (0, 1), "kept": (1, 1), "still-failing": (0, 1)})
    cur = suite({"broke": (0, 1), "fixed": (1, 1), "kept": (1, 1), "still-failing": (0, 1)})
    assert changes(compare(cur, base)) == {"broke": "regressed", "fixed": "improved", "kept": "unchanged",
                                           "still-failing": "unchanged"}


@pytest.mark.parametrize("n", [2, 3])
def test_a_full_flip_with_too_few_trials_for_fisher_still_counts(n: int) -> None:
    # Fisher's smallest p with 2 or 3 trials per side is 1/6 or 1/20: never < 0.05.
    result = compare(suite({"broke": (0, n), "fixed": (n, n), "same": (n, n)}),
                     suite({"broke": (n, n), "fixed": (0, n), "same": (n, n)}))
    assert changes(result) == {"broke": "regressed", "fixed": "improved", "same": "unchanged"}
    # One trial before, five after: all pass -> all fail.
    assert classify(Side(1, 1, 1.0), Side(5, 0, 0.0), RegressionPolicy())[0] == "regressed"


def test_new_and_removed_cases_are_listed_but_not_compared() -> None:
    base = suite({"kept": (5, 5), "dropped": (0, 5)})
    cur = suite({"kept": (5, 5), "added": (0, 5)})
    result = compare(cur, base)
    assert changes(result) == {"kept": "unchanged", "dropped": "removed", "added": "new"}
    (target,) = result.targets
    assert target.cases_compared == 1 and target.pass_rate_delta == 0 and not target.regressed


def test_errors_count_as_failures_and_unevaluated_trials_are_left_out() -> None:
    base = suite({"t1": (3, 3)})
    cur = (trials("t1", 0, 3, status="error")
           + [TrialResult("t1", "model-a", 9, "not_evaluated", None, None, None, None, None, None)])
    (case,) = compare(cur, base).cases
    assert case.current.trials == 3 and case.current.passes == 0 and case.change == "regressed"


# ---- per target --------------------------------------------------------------------------

def test_a_real_drop_on_many_cases_regresses_the_target() -> None:
    base = suite({f"t{i:02d}": (5, 5) for i in range(40)})
    cur = suite({f"t{i:02d}": (0 if i < 20 else 5, 5) for i in range(40)})
    result = compare(cur, base)
    (target,) = result.targets
    assert result.regressed and target.regressed
    assert target.pass_rate_delta == pytest.approx(-0.5)
    assert (target.baseline_pass_rate, target.current_pass_rate) == pytest.approx((1.0, 0.5))
    assert target.ci_low < target.pass_rate_delta < target.ci_high < 0  # interval entirely below 0
    assert target.p_value == pytest.approx(0.5**20)  # 20 cases fell, none rose: the exact sign-flip tail
    assert target.adjusted_p == target.p_value  # one target: Holm changes nothing
    assert target.drivers == [f"t{i:02d}" for i in range(20)]
    assert (target.mcnemar_b, target.mcnemar_c) == (20, 0) and target.mcnemar_p == pytest.approx(0.5**20)
    assert target.score_delta == pytest.approx(-0.5)


def test_a_thin_drop_over_many_cases_still_names_the_cases_that_drove_it() -> None:
    # 60 of 100 cases lose one trial in five (5/5 -> 4/5): none significant alone, the target is.
    base = suite({f"t{i:03d}": (5, 5) for i in range(100)})
    cur = suite({f"t{i:03d}": (4 if i < 60 else 5, 5) for i in range(100)})
    result = compare(cur, base)
    (target,) = result.targets
    assert "regressed" not in changes(result).values()
    assert target.regressed and target.pass_rate_delta == pytest.approx(-0.12)
    assert target.p_value == pytest.approx(0.5**60)
    assert sorted(target.drivers) == [f"t{i:03d}" for i in range(60)]


def test_one_trial_per_case_the_suite_test_is_mcnemar() -> None:
    # 12 pass -> fail, 3 fail -> pass among 80 single-trial cases.
    base = suite({f"t{i:02d}": (1 if i < 12 or i >= 15 else 0, 1) for i in range(80)})
    cur = suite({f"t{i:02d}": (0 if i < 12 else 1 if i < 15 else 1, 1) for i in range(80)})
    (target,) = compare(cur, base).targets
    assert (target.mcnemar_b, target.mcnemar_c) == (12, 3)
    assert target.p_value == pytest.approx(mcnemar_exact(12, 3)[1], rel=1e-9)
    assert target.mcnemar_p == pytest.approx(mcnemar_exact(12, 3)[1])


def test_mcnemar_counts_skip_flaky_baselines() -> None:
    base = suite({"stable": (5, 5), "flaky": (3, 5)})
    cur = suite({"stable": (0, 5), "flaky": (0, 5)})
    (target,) = compare(cur, base).targets
    assert (target.mcnemar_b, target.mcnemar_c) == (1, 0)


def test_a_significant_drop_below_min_effect_is_not_a_regression() -> None:
    # 400 single-trial cases, 12 flip pass -> fail: p = 2^-12, but only 3 points.
    base = suite({f"t{i:03d}": (1, 1) for i in range(400)})
    cur = suite({f"t{i:03d}": (0 if i < 12 else 1, 1) for i in range(400)})
    (target,) = compare(cur, base).targets
    assert target.adjusted_p == pytest.approx(0.5**12) and target.adjusted_p < 0.05
    assert target.pass_rate_delta == pytest.approx(-0.03)
    assert not target.regressed
    assert len(target.drivers) == 12  # the flips are still reported
    # ... and a policy with a smaller minimum effect calls it.
    (strict,) = compare(cur, base, RegressionPolicy(min_effect=0.02)).targets
    assert strict.regressed


def test_two_targets_one_drops_holm_adjusts_and_only_it_regresses() -> None:
    spec_base = {f"t{i:02d}": (1, 1) for i in range(30)}
    drops = {f"t{i:02d}": (0 if i < 15 else 1, 1) for i in range(30)}
    wobble = {f"t{i:02d}": (0 if i == 0 else 1, 1) for i in range(30)}
    base = suite(spec_base, "model-a") + suite(spec_base, "model-b")
    cur = suite(drops, "model-a") + suite(wobble, "model-b")
    result = compare(cur, base)
    by_target = {t.target: t for t in result.targets}
    a, b = by_target["model-a"], by_target["model-b"]
    assert (a.p_value, b.p_value) == pytest.approx((0.5**15, 0.5))
    assert [a.adjusted_p, b.adjusted_p] == pytest.approx(holm([a.p_value, b.p_value]))
    assert a.adjusted_p == pytest.approx(2 * 0.5**15) and b.adjusted_p == pytest.approx(0.5)
    assert a.regressed and not b.regressed and result.regressed
    assert b.drivers == ["t00"]  # its one flip is still reported, without a regressed verdict


def test_an_improvement_is_not_a_regression() -> None:
    base = suite({f"t{i}": (0, 5) for i in range(20)})
    cur = suite({f"t{i}": (5, 5) for i in range(20)})
    (target,) = compare(cur, base).targets
    assert target.pass_rate_delta == 1.0 and target.p_value == 1.0 and not target.regressed
    assert target.ci_low > 0 and set(changes(compare(cur, base)).values()) == {"improved"}


def test_compare_is_reproducible() -> None:
    rng = np.random.default_rng(5)
    base = suite({f"t{i}": (int(rng.integers(0, 6)), 5) for i in range(60)})
    cur = suite({f"t{i}": (int(rng.integers(0, 6)), 5) for i in range(60)})
    assert compare(cur, base) == compare(cur, base)
    assert compare(cur, base, RegressionPolicy(seed=1)).targets[0].p_value == compare(cur, base).targets[0].p_value


# ---- the power simulation (benchmarks/regression_power.py) --------------------------------

def test_power_simulation_core_with_tiny_numbers() -> None:
    from benchmarks.regression_power import (Scenario, lower_concentrated, lower_diffuse, plan, render_docs,
                                             simulate, true_rates, wilson)

    rng = np.random.default_rng(0)
    p = true_rates(200, rng)
    assert ((0 <= p) & (p <= 1)).all() and 0.55 < p.mean() < 0.75
    for drop in (0.05, 0.1, 0.2):
        assert p.mean() - lower_diffuse(p, drop).mean() == pytest.approx(drop, abs=1e-9)
        lowered = lower_concentrated(p, drop, rng)
        assert p.mean() - lowered.mean() == pytest.approx(drop, abs=1e-9) and (lowered >= 0).all()
    low, high = wilson(0, 10)
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)

    cells = simulate([(Scenario(30, 3, 0.0), 4), (Scenario(30, 3, 0.4), 4),
                      (Scenario(20, 1, 0.0, targets=2), 3)], seed=1, jobs=1)
    assert [c.runs for c in cells] == [4, 4, 3] and all(len(c.outcomes) == c.runs for c in cells)
    none, drop, two = cells
    assert none.false_alarm()[0] == 0.0  # a 5-point estimate is far outside the noise of 30 x 3
    assert drop.detection()[0] == 1.0  # a 40-point drop is always found
    assert all(t.true_delta == pytest.approx(-0.4) for run in drop.outcomes for t in run)
    assert all(len(run) == 2 for run in two.outcomes)
    assert simulate([(Scenario(30, 3, 0.4), 4)], seed=1)[0].outcomes == drop.outcomes  # seeded

    assert len(plan(10, 20, quick=True)) == 4
    text = render_docs(cells + simulate([(Scenario(200, 5, 0.0), 2), (Scenario(200, 5, 0.1), 2)], seed=1),
                       command="python -m benchmarks.regression_power --write-docs", seconds=1.0, jobs=1, seed=1)
    assert "## Goals and result" in text and "Holm" in text


def test_power_simulation_cli_quick(capsys) -> None:
    from benchmarks.regression_power import main

    assert main(["--quick", "--runs", "3", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "200 cases x 5 trials" in out and "12 comparisons" in out
