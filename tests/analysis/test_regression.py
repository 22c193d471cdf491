"""Regression verdicts (`eval_pipelines.analysis.regression.compare` / `compare_all`) on synthetic
trial results: case labels with FDR control, the suite-level test with its practical-significance
policy, joint control over comparisons, the breakage signal; and a smoke run of the power
simulation's core (`benchmarks/regression_power.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from eval_pipelines.analysis.metrics import TrialResult
from eval_pipelines.analysis.policy import at_least
from eval_pipelines.analysis.regression import RegressionPolicy, Side, classify, compare, compare_all
from eval_pipelines.analysis.stats import benjamini_hochberg, fisher_one_sided, holm, mcnemar_exact


def trials(test_id: str, passes: int, n: int, target: str = "model-a", status: str = "graded") -> list[TrialResult]:
    """``n`` trials of one case, the first ``passes`` passing."""
    return [TrialResult(test_id, target, i, status, "pass" if i < passes else "fail",
                        1.0 if i < passes else 0.0, None, None, None, None) for i in range(n)]


def suite(spec: dict[str, tuple[int, int]], target: str = "model-a") -> list[TrialResult]:
    """{test_id: (passes, trials)} -> trial results."""
    return [r for test_id, (passes, n) in spec.items() for r in trials(test_id, passes, n, target)]


def changes(result) -> dict[str, str]:
    return {c.test_id: c.change for c in result.cases}


# ---- per case: labels only what survives the false-discovery rate -------------------------

def test_a_case_flaky_on_both_sides_is_flaky_not_regressed() -> None:
    result = compare(suite({"t1": (2, 5)}), suite({"t1": (2, 5)}))
    (case,) = result.cases
    assert case.change == "flaky" and case.pass_rate_delta == 0
    (target,) = result.targets
    assert target.pass_rate_delta == 0 and target.p_value == 1.0 and not target.regressed
    assert target.drivers == [] and not result.regressed


def test_a_case_alone_that_passes_5_of_5_then_0_of_5_regressed_with_its_q_value() -> None:
    (case,) = compare(suite({"t1": (0, 5)}), suite({"t1": (5, 5)})).cases
    assert case.change == "regressed" and case.p_value == pytest.approx(1 / 252)
    assert case.q_value == pytest.approx(1 / 252)  # one test: q = p
    assert case.pass_rate_delta == -1.0


def test_the_same_flip_among_200_unchanged_cases_is_not_labelled() -> None:
    # Uncorrected, 1/252 < 0.05 would label it; among 200 case tests its BH q-value is
    # min(200 / 252, the q of the next ranks) = 0.738 (the unchanged cases' own p).
    base = suite({"t000": (5, 5)} | {f"t{i:03d}": (3, 5) for i in range(1, 200)})
    cur = suite({"t000": (0, 5)} | {f"t{i:03d}": (3, 5) for i in range(1, 200)})
    cases = {c.test_id: c for c in compare(cur, base).cases}
    assert cases["t000"].p_value == pytest.approx(1 / 252)
    assert cases["t000"].q_value == pytest.approx(fisher_one_sided(3, 5, 3, 5)) and cases["t000"].q_value > 0.5
    assert cases["t000"].change == "changed" and "regressed" not in {c.change for c in cases.values()}


def test_twenty_flips_among_200_survive_the_fdr_and_q_values_are_benjamini_hochberg() -> None:
    base = suite({f"t{i:03d}": (5, 5) if i < 20 else (3, 5) for i in range(200)})
    cur = suite({f"t{i:03d}": (0, 5) if i < 20 else (3, 5) for i in range(200)})
    result = compare(cur, base)
    labelled = sorted(c.test_id for c in result.cases if c.change == "regressed")
    assert labelled == [f"t{i:03d}" for i in range(20)]
    drops = [fisher_one_sided(c.baseline.passes, c.baseline.trials, c.current.passes, c.current.trials)
             for c in result.cases]
    assert [c.drop_p for c in result.cases] == pytest.approx(drops)
    expected_q = benjamini_hochberg(drops)
    assert [c.q_value for c in result.cases[:20]] == pytest.approx(expected_q[:20])
    assert result.cases[0].q_value == pytest.approx(200 / 20 / 252)  # 0.040 <= 0.10


def test_case_fdr_is_the_labelling_level() -> None:
    base = suite({f"t{i:03d}": (5, 5) if i < 20 else (3, 5) for i in range(200)})
    cur = suite({f"t{i:03d}": (0, 5) if i < 20 else (3, 5) for i in range(200)})
    strict = compare(cur, base, RegressionPolicy(case_fdr=0.03))
    assert "regressed" not in changes(strict).values()  # q = 0.040 > 0.03


def test_dbh_labels_the_breaks_that_bh_cannot_reach() -> None:
    # 10 cases break 5/5 -> 0/5 (Fisher p = 1/252), 10 break 4/5 -> 0/5 (p = 6/252 = 0.024), 180 stay at 4/5
    # (8 passes in 10 trials: their drop p can never go below 56/252). BH divides by all 200 tests: the
    # 4/5 breaks get q = 200 x 0.024 / 20 = 0.24. The discrete BH counts only the tests that can reach
    # 0.024 - the 20 breaks - and labels all of them, with q-values worked out by hand: tau_m = 26/252,
    # so the step-up sums are 10 (1/252) / (226/252) at 1/252 and that + 10 (6/252) / (246/252) at 6/252.
    base = suite({f"t{i:03d}": (5, 5) if i < 10 else (4, 5) for i in range(200)})
    cur = suite({f"t{i:03d}": (0, 5) if i < 20 else (4, 5) for i in range(200)})
    broken = [f"t{i:03d}" for i in range(20)]
    bh = compare(cur, base, RegressionPolicy(case_labels="bh"))
    assert sorted(t for t, c in changes(bh).items() if c == "regressed") == broken[:10]
    dbh = compare(cur, base, RegressionPolicy(case_labels="dbh"))
    labelled = {c.test_id: c.q_value for c in dbh.cases if c.change == "regressed"}
    assert sorted(labelled) == broken
    assert [labelled[t] for t in broken] == pytest.approx([10 / 226 / 10] * 10 + [(10 / 226 + 60 / 246) / 20] * 10)
    # A case is labelled iff its q-value is at most case_fdr; the breakage check names the same cases.
    assert all((c.change == "regressed") == (c.q_value is not None and c.q_value <= 0.10
                                             and c.pass_rate_delta < 0) for c in dbh.cases)
    (breakage,) = dbh.breakage
    assert sorted(breakage.labelled) == broken and breakage.broken
    strict = compare(cur, base, RegressionPolicy(case_labels="dbh", case_fdr=0.01))
    assert sorted(t for t, c in changes(strict).items() if c == "regressed") == broken[:10]


def test_with_many_trials_the_labels_switch_to_the_mirror_estimate() -> None:
    # 10 trials a side: correlated trials make Fisher's tiny p-values overconfident, so "auto"
    # uses the rises as the estimate of false drops. 20 complete breaks and one complete rise.
    spec = {f"t{i:03d}": (10, 10) if i < 20 else (0, 10) if i == 20 else (5, 10) for i in range(100)}
    after = {f"t{i:03d}": (0, 10) if i < 20 else (10, 10) if i == 20 else (5, 10) for i in range(100)}
    auto = compare(suite(after), suite(spec))
    labelled = {c.test_id: c.q_value for c in auto.cases if c.change == "regressed"}
    assert sorted(labelled) == [f"t{i:03d}" for i in range(20)]
    assert list(labelled.values()) == pytest.approx([(1 + 1) / 20] * 20)
    bh = compare(suite(after), suite(spec), RegressionPolicy(case_labels="bh"))
    assert {c.test_id for c in bh.cases if c.change == "regressed"} == set(labelled)
    # Nine breaks and one rise: BH labels them, the mirror cannot tell them from chance.
    few = {f"t{i:03d}": (0, 10) if i < 9 else (10, 10) if i == 9 else (5, 10) for i in range(100)}
    before = {f"t{i:03d}": (10, 10) if i < 9 else (0, 10) if i == 9 else (5, 10) for i in range(100)}
    assert "regressed" not in changes(compare(suite(few), suite(before)))
    assert "regressed" in changes(compare(suite(few), suite(before), RegressionPolicy(case_labels="bh"))).values()
    with pytest.raises(ValueError, match="case_labels must be auto, dbh, bh or mirror"):
        RegressionPolicy(case_labels="guess")  # type: ignore[arg-type]


def test_single_trial_flips_are_changes_never_labels() -> None:
    # One trial a side cannot show a case changed (Fisher p = 1/2): the flip is reported, not labelled.
    base = suite({"broke": (1, 1), "fixed": (0, 1), "kept": (1, 1), "still-failing": (0, 1)})
    cur = suite({"broke": (0, 1), "fixed": (1, 1), "kept": (1, 1), "still-failing": (0, 1)})
    assert changes(compare(cur, base)) == {"broke": "changed", "fixed": "changed", "kept": "unchanged",
                                           "still-failing": "unchanged"}


def test_classify_reads_the_q_values() -> None:
    base, cur = Side(5, 5, 1.0), Side(5, 2, 0.4)
    assert classify(base, cur, drop_q=0.2) == "flaky"
    assert classify(base, cur, drop_q=0.05) == "regressed"
    assert classify(cur, base, rise_q=0.05) == "improved"
    assert classify(Side(3, 3, 1.0), Side(3, 0, 0.0), drop_q=0.5) == "changed"
    assert classify(None, cur) == "new" and classify(base, None) == "removed"


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
    assert case.current.trials == 3 and case.current.passes == 0
    assert case.p_value == pytest.approx(1 / 20) and case.change == "regressed"  # q = p = 0.05 <= 0.10


# ---- per target: significant, large enough, and the words ---------------------------------

def test_a_real_drop_on_many_cases_regresses_the_target() -> None:
    base = suite({f"t{i:02d}": (5, 5) for i in range(40)})
    cur = suite({f"t{i:02d}": (0 if i < 20 else 5, 5) for i in range(40)})
    result = compare(cur, base)
    (target,) = result.targets
    assert result.regressed and target.regressed and target.verdict == "regressed"
    assert target.significant and target.large_enough
    assert target.pass_rate_delta == pytest.approx(-0.5)
    assert (target.baseline_pass_rate, target.current_pass_rate) == pytest.approx((1.0, 0.5))
    assert target.ci_low < target.pass_rate_delta < target.ci_high < 0  # interval entirely below 0
    assert target.p_value == pytest.approx(0.5**20)  # 20 cases fell, none rose: the exact sign-flip tail
    assert target.adjusted_p == target.p_value  # one target, one comparison: Holm changes nothing
    assert target.drivers == [f"t{i:02d}" for i in range(20)]
    assert (target.mcnemar_b, target.mcnemar_c) == (20, 0) and target.mcnemar_p == pytest.approx(0.5**20)
    assert target.score_delta == pytest.approx(-0.5)
    assert target.wording.startswith("regressed: -50.0 pts") and "large enough" in target.wording


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


def test_a_significant_drop_the_interval_shows_is_below_the_margin_is_reported_not_failed() -> None:
    # 400 single-trial cases, 12 flip pass -> fail: p = 2^-12, a 3-point drop whose interval excludes 5.
    base = suite({f"t{i:03d}": (1, 1) for i in range(400)})
    cur = suite({f"t{i:03d}": (0 if i < 12 else 1, 1) for i in range(400)})
    (target,) = compare(cur, base).targets
    assert target.adjusted_p == pytest.approx(0.5**12) and target.significant
    assert target.pass_rate_delta == pytest.approx(-0.03) and target.ci_low > -0.05
    assert not target.large_enough and not target.regressed and target.verdict == "small_drop"
    assert "significant drop" in target.wording and "not large enough for the 5 pts margin" in target.wording
    assert len(target.drivers) == 0  # no case is labelled, and the target did not regress
    # A smaller margin, or none, calls it.
    assert compare(cur, base, RegressionPolicy(min_effect=0.02)).targets[0].regressed
    assert compare(cur, base, RegressionPolicy(min_effect=0.0)).targets[0].regressed


def test_the_effect_rules_from_lenient_to_strict() -> None:
    # 20 of 200 cases break (5/5 -> 0/5): a 10-point drop, interval about [-14, -6].
    base = suite({f"t{i:03d}": (5, 5) for i in range(200)})
    cur = suite({f"t{i:03d}": (0 if i < 20 else 5, 5) for i in range(200)})
    verdicts = {rule: compare(cur, base, RegressionPolicy(min_effect=0.08, effect_rule=rule)).targets[0]
                for rule in ("plausible", "estimate", "certain")}
    assert verdicts["plausible"].regressed and verdicts["estimate"].regressed
    assert not verdicts["certain"].regressed and verdicts["certain"].verdict == "small_drop"  # ci_high > -8
    with pytest.raises(ValueError, match="effect_rule"):
        RegressionPolicy(effect_rule="sometimes")  # type: ignore[arg-type]


def test_a_drop_of_exactly_the_margin_is_not_lost_to_floating_point() -> None:
    # 6 of 40 cases go from 1/3 to 0/3: a drop of 6/120 = 0.05 exactly; the float mean is 0.049999999999999996.
    base = suite({f"t{i:02d}": (1, 3) if i < 6 else (3, 3) for i in range(40)})
    cur = suite({f"t{i:02d}": (0, 3) if i < 6 else (3, 3) for i in range(40)})
    (target,) = compare(cur, base, RegressionPolicy(effect_rule="estimate")).targets
    assert -target.pass_rate_delta < 0.05  # the float falls short ...
    assert target.large_enough and target.regressed  # ... and the margin still holds
    assert at_least(0.04999999999999998, 0.05) and not at_least(0.0499, 0.05)


def test_no_regression_is_said_as_equivalence_only_when_the_interval_allows() -> None:
    same = {f"t{i:03d}": (i % 6, 5) for i in range(300)}
    (big,) = compare(suite(same), suite(same)).targets
    assert big.verdict == "no_regression" and big.ci_low > -0.05
    assert big.wording.startswith("no regression: no drop of 5 pts or more")
    few = {f"t{i}": (i % 6, 5) for i in range(6)}
    (small,) = compare(suite(few), suite(few)).targets
    assert small.verdict == "inconclusive" and small.ci_low <= -0.05
    assert "does not rule out a drop of 5 pts" in small.wording


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
    assert b.drivers == []  # its one flip is not a label and the target did not regress


def test_the_previous_version_and_the_previous_night_are_corrected_together() -> None:
    # 7 of 60 cases fall: one-sided p = 2^-7 = 0.0078 against either baseline alone.
    base = suite({f"t{i:02d}": (1, 1) for i in range(60)})
    cur = suite({f"t{i:02d}": (0 if i < 7 else 1, 1) for i in range(60)})
    alone = compare(cur, base).targets[0]
    version, night = compare_all(cur, [base, base])
    assert alone.adjusted_p == pytest.approx(0.5**7)
    assert version.targets[0].adjusted_p == pytest.approx(2 * 0.5**7)  # Holm over both comparisons
    assert night.targets[0].adjusted_p == pytest.approx(2 * 0.5**7)
    # 5 of 60 fall: p = 1/32 is significant against one baseline, not once corrected for two.
    five = suite({f"t{i:02d}": (0 if i < 5 else 1, 1) for i in range(60)})
    assert compare(five, base).targets[0].adjusted_p == pytest.approx(1 / 32)
    assert [r.targets[0].adjusted_p for r in compare_all(five, [base, base])] == pytest.approx([1 / 16, 1 / 16])


def test_an_improvement_is_not_a_regression() -> None:
    base = suite({f"t{i}": (0, 5) for i in range(20)})
    cur = suite({f"t{i}": (5, 5) for i in range(20)})
    result = compare(cur, base)
    (target,) = result.targets
    assert target.pass_rate_delta == 1.0 and target.p_value == 1.0 and not target.regressed
    assert target.ci_low > 0 and target.verdict == "improved" and set(changes(result).values()) == {"improved"}


def test_compare_is_reproducible() -> None:
    rng = np.random.default_rng(5)
    base = suite({f"t{i}": (int(rng.integers(0, 6)), 5) for i in range(60)})
    cur = suite({f"t{i}": (int(rng.integers(0, 6)), 5) for i in range(60)})
    assert compare(cur, base) == compare(cur, base)


# ---- breakage the mean hides ---------------------------------------------------------------

def test_cancel_out_breakage_passes_the_mean_and_fails_the_breakage_signal() -> None:
    # 20 of 200 cases break completely while the other 180 improve by one trial in five.
    base = suite({f"t{i:03d}": (5, 5) if i < 20 else (2, 5) for i in range(200)})
    cur = suite({f"t{i:03d}": (0, 5) if i < 20 else (3, 5) for i in range(200)})
    result = compare(cur, base)
    (target,) = result.targets
    assert target.pass_rate_delta == pytest.approx((-20 + 180 * 0.2) / 200) and not result.regressed
    (breakage,) = result.breakage
    assert (breakage.significant_drops, breakage.significant_rises) == (20, 0)
    assert breakage.p_value == pytest.approx(0.5**20) and breakage.broken and result.broken
    assert sorted(breakage.labelled) == [f"t{i:03d}" for i in range(20)]
    assert "20 cases dropped significantly" in breakage.wording and "broken beyond chance" in breakage.wording


def test_the_breakage_signal_weighs_drops_against_rises() -> None:
    # As many significant rises as drops: chance, not breakage.
    base = suite({f"t{i:03d}": (5, 5) if i < 10 else (0, 5) if i < 20 else (3, 5) for i in range(100)})
    cur = suite({f"t{i:03d}": (0, 5) if i < 10 else (5, 5) if i < 20 else (3, 5) for i in range(100)})
    (breakage,) = compare(cur, base).breakage
    assert (breakage.significant_drops, breakage.significant_rises) == (10, 10)
    assert breakage.p_value == pytest.approx(sum(__import__("math").comb(20, k) for k in range(10, 21)) / 2**20)
    assert not breakage.broken


def test_the_breakage_signal_says_when_the_trials_cannot_show_it() -> None:
    base = suite({f"t{i}": (1, 1) for i in range(50)})
    cur = suite({f"t{i}": (0 if i < 10 else 1, 1) for i in range(50)})
    (breakage,) = compare(cur, base).breakage
    assert not breakage.broken and breakage.wording.startswith("not testable")


def test_breakage_is_holm_adjusted_over_the_comparisons() -> None:
    base = suite({f"t{i:02d}": (5, 5) if i < 5 else (2, 5) for i in range(60)})
    cur = suite({f"t{i:02d}": (0, 5) if i < 5 else (2, 5) for i in range(60)})
    (alone,) = compare(cur, base).breakage
    assert alone.p_value == pytest.approx(1 / 32) and alone.broken
    first, second = (r.breakage[0] for r in compare_all(cur, [base, base]))
    assert first.adjusted_p == pytest.approx(1 / 16) and not first.broken and not second.broken


# ---- the power simulation (benchmarks/regression_power.py) --------------------------------

def test_power_simulation_core_with_tiny_numbers() -> None:
    from benchmarks.regression_docs import render_docs
    from benchmarks.regression_power import (Scenario, cancel_out, lower_concentrated, lower_diffuse, pass_counts,
                                             plan, simulate, true_rates, wilson)

    rng = np.random.default_rng(0)
    for mix, mean in (("beta-0.5", 0.5), ("beta-2", 0.5)):
        p = true_rates(mix, 4000, rng)
        assert ((0 <= p) & (p <= 1)).all() and abs(p.mean() - mean) < 0.03
    assert (true_rates("beta-0.5", 4000, rng) > 0.9).mean() > 0.15  # U-shaped
    assert (true_rates("beta-2", 4000, rng) > 0.9).mean() < 0.05  # hump-shaped
    p = true_rates("beta-2", 200, rng)
    for drop in (0.05, 0.1, 0.2):
        assert p.mean() - lower_diffuse(p, drop).mean() == pytest.approx(drop, abs=1e-9)
        lowered = lower_concentrated(p, drop, rng)
        assert p.mean() - lowered.mean() == pytest.approx(drop, abs=1e-9) and (lowered >= 0).all()
    q, broken = cancel_out(p, rng)
    assert broken.sum() == 20 and (q[broken] == 0).all() and (q[~broken] >= p[~broken]).all()
    assert q.mean() == pytest.approx(p.mean(), abs=1e-9) and p[broken].min() >= p[~broken].max()
    # Correlated trials: the spread of a case's passes over runs exceeds the binomial one.
    half = np.full(20000, 0.5)
    assert pass_counts(half, 5, 0.3, rng).var() > 1.5 * pass_counts(half, 5, 0.0, rng).var()
    low, high = wilson(0, 10)
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)

    cells = simulate([(Scenario("beta-2", 30, 3), 4), (Scenario("beta-2", 30, 3, 0.4), 4),
                      (Scenario("beta-0.5", 40, 5, pattern="cancel"), 3)], seed=1, jobs=1)
    assert [c.runs for c in cells] == [4, 4, 3]
    none, drop, cancel = cells
    assert drop.rate("regressed")[0] == 1.0  # a 40-point drop is always found
    assert all(o.true_delta == pytest.approx(-0.4) for o in drop.outcomes)
    assert all(o.broken_cases == 4 and o.true_delta == pytest.approx(0, abs=1e-9) for o in cancel.outcomes)
    assert simulate([(Scenario("beta-2", 30, 3, 0.4), 4)], seed=1)[0].outcomes == drop.outcomes  # seeded
    assert len(plan(10, 20, quick=True)) == 6
    text = render_docs(cells, command="python -m benchmarks.regression_power --write-docs", seconds=1.0,
                       jobs=1, seed=1)
    assert "## Goals and result" in text and "Benjamini-Hochberg" in text and "Beta(0.5, 0.5)" in text


def test_power_simulation_cli_quick(capsys) -> None:
    from benchmarks.regression_power import main

    assert main(["--quick", "--runs", "3", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "200 x 5, no change" in out and "18 simulated comparisons" in out


def test_oracle_probe_null_is_fisher_without_correlation_and_wider_with_it() -> None:
    from benchmarks.regression_oracle import conditional_cdf, probe
    from eval_pipelines.analysis.stats import fisher_support

    # rho = 0: the law of the current passes given the total is hypergeometric - Fisher's own null.
    for total in range(11):
        assert sorted(set(conditional_cdf(5, total, 0.0)[1])) == pytest.approx(list(fisher_support(5, 5, total)))
    # rho = 0.1 (the simulation's): a complete flip of a case with 5 passes in 10 is about 0.022, not 1/252.
    assert conditional_cdf(5, 5, 0.1)[1][0] == pytest.approx(0.0217, abs=5e-4)
    assert conditional_cdf(5, 4, 0.1)[1][0] == pytest.approx(0.0676, abs=5e-4)
    false_rate, share = probe("beta-0.5", "cancel", 0.1, runs=3)
    assert 0 <= false_rate <= 1 and 0.5 < share <= 1
