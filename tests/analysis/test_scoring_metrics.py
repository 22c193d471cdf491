"""Scoring model (seed 001), pass@k / pass^k (seed 003), suite metrics, gates, versions."""

from __future__ import annotations

import random
from math import comb

import pytest

from eval_pipelines.analysis.gates import failed_thresholds, metric_for_threshold, missing_reason
from eval_pipelines.grading.dispatch import Grade
from eval_pipelines.analysis.metrics import TrialResult, pass_at_k, pass_hat_k, percentile, suite_metrics
from eval_pipelines.grading.scoring import score_case, verdict_for
from eval_pipelines.analysis.versions import latest_versions, version_sort_key


def g(score: float, *, weight: float = 1.0, required: bool | float = False, status: str = "graded",
      name: str = "a") -> Grade:
    return Grade(assertion_index=0, assertion_type="contains", assertion_name=name, score=score,
                 passed=status == "graded" and score >= 0.8, status=status,  # type: ignore[arg-type]
                 reason="r", weight=weight, required=required)


# ---- scoring ---------------------------------------------------------------

def test_required_true_gate_failing_zeroes_the_score() -> None:
    result = score_case([g(0.0, required=True, name="gate"), g(1.0, weight=10)])
    assert (result.score, result.verdict, result.status) == (0.0, "fail", "graded")
    assert "required gate gate" in result.reason


def test_required_true_gate_means_pass_threshold() -> None:
    # 0.79 < 0.8 fails the gate even though the weighted mean would be high.
    assert score_case([g(0.79, required=True), g(1.0, weight=100)]).score == 0.0
    passed = score_case([g(0.8, required=True), g(1.0)])
    assert passed.score == pytest.approx(0.9) and passed.verdict == "pass"


def test_numeric_required_gate_uses_its_own_minimum() -> None:
    ok = score_case([g(0.6, required=0.5), g(0.6)])
    assert ok.score == pytest.approx(0.6) and ok.verdict == "borderline"
    bad = score_case([g(0.4, required=0.5), g(1.0)])
    assert (bad.score, bad.verdict) == (0.0, "fail")


def test_weighted_mean() -> None:
    result = score_case([g(1.0, weight=3), g(0.0, weight=1)])
    assert result.score == pytest.approx(0.75)
    assert result.verdict == "borderline"
    assert "failed: a" in result.reason


def test_zero_weights_fall_back_to_plain_mean() -> None:
    assert score_case([g(1.0, weight=0), g(0.5, weight=0)]).score == pytest.approx(0.75)


@pytest.mark.parametrize("score,verdict", [(1.0, "pass"), (0.8, "pass"), (0.79, "borderline"),
                                           (0.6, "borderline"), (0.59, "fail"), (0.0, "fail")])
def test_verdict_thresholds(score: float, verdict: str) -> None:
    assert verdict_for(score) == verdict
    assert score_case([g(score)]).verdict == verdict


def test_output_error_is_error_status_and_fail_verdict() -> None:
    result = score_case([g(1.0)], output_error="command timed out")
    assert (result.score, result.verdict, result.status) == (0.0, "fail", "error")
    assert "command timed out" in result.reason


def test_grader_error_makes_the_case_an_error() -> None:
    result = score_case([g(1.0), g(0.0, status="error", name="schema")])
    assert (result.score, result.verdict, result.status) == (0.0, "fail", "error")
    assert result.reason.startswith("schema:")


def test_no_grades_is_not_evaluated() -> None:
    result = score_case([])
    assert result.status == "not_evaluated"
    assert result.score is None and result.verdict is None


# ---- pass@k / pass^k --------------------------------------------------------

def test_pass_at_k_seed_examples() -> None:
    assert round(pass_at_k(10, 3, 1), 3) == 0.300
    assert pass_at_k(10, 3, 10) == 1.0
    # Seed 003 prints "0.738" next to pass@5(10, 3), but its own formula and code
    # (1 - C(n-c, k) / C(n, k)) give 1 - C(7,5)/C(10,5) = 1 - 21/252 = 0.917.
    # The implementation follows the formula; the seed's comment is a typo.
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - comb(7, 5) / comb(10, 5))
    assert round(pass_at_k(10, 3, 5), 3) == 0.917


def test_pass_hat_k_is_the_unbiased_estimator() -> None:
    # Seed 003 prints the plug-in (c/n)^k: 0.800, 0.512, 0.328 for 8 of 10. The unbiased
    # estimate of "k independent trials all pass" is C(c, k) / C(n, k).
    assert pass_hat_k(10, 8, 1) == pytest.approx(0.8)
    assert pass_hat_k(10, 8, 3) == pytest.approx(56 / 120)
    assert pass_hat_k(10, 8, 5) == pytest.approx(56 / 252)
    # 4 passes of 5: no 5 trials all passed, so pass^5 is 0 (the plug-in said 0.33).
    assert pass_hat_k(5, 4, 5) == 0.0
    assert pass_hat_k(5, 5, 5) == 1.0


def test_pass_hat_k_refuses_what_it_cannot_estimate_like_pass_at_k() -> None:
    for n, c, k in ((0, 0, 3), (3, 1, 4), (3, 1, 0), (3, 4, 2)):
        with pytest.raises(ValueError, match=r"pass\^k needs"):
            pass_hat_k(n, c, k)
        with pytest.raises(ValueError, match=r"pass@k needs"):
            pass_at_k(n, c, k)


def test_pass_hat_k_equals_the_ratio_of_binomials_on_random_inputs() -> None:
    """Property test: pass^k is C(c, k) / C(n, k) (correctly rounded), and it is the
    mean over all k-subsets of the trials of "every trial in the subset passed"."""
    from itertools import combinations

    rng = random.Random(20)
    for _ in range(2_000):
        n = rng.randint(1, 60)
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        assert pass_hat_k(n, c, k) == comb(c, k) / comb(n, k)
    for _ in range(200):
        n = rng.randint(1, 9)
        outcomes = [rng.random() < 0.6 for _ in range(n)]
        k = rng.randint(1, n)
        subsets = list(combinations(outcomes, k))
        assert pass_hat_k(n, sum(outcomes), k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_pass_at_k_edges() -> None:
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


# ---- suite metrics ---------------------------------------------------------

def tr(test_id: str, trial: int, status: str, verdict: str | None, score: float | None, *,
       target: str = "m", latency: float | None = None, cost: float | None = None) -> TrialResult:
    return TrialResult(test_id=test_id, target=target, trial=trial, status=status, verdict=verdict,
                       score=score, latency_ms=latency, cost_usd=cost, prompt_tokens=None,
                       completion_tokens=None)


def test_suite_metrics_errors_are_non_passes_and_not_evaluated_excluded() -> None:
    rows = [
        tr("a", 0, "graded", "pass", 1.0),
        tr("b", 0, "graded", "borderline", 0.7),
        tr("c", 0, "error", "fail", 0.0),
        tr("d", 0, "not_evaluated", None, None),
    ]
    m = suite_metrics(rows)["m"]
    assert m["trials"] == 4
    assert m["errors"] == 1 and m["not_evaluated"] == 1 and m["graded"] == 2
    assert m["passed"] == 1 and m["borderline"] == 1 and m["failed"] == 1
    assert m["pass_rate"] == pytest.approx(1 / 3)
    assert m["mean_score"] == pytest.approx(1.7 / 3)


def test_suite_metrics_only_not_evaluated_has_no_pass_rate() -> None:
    m = suite_metrics([tr("a", 0, "not_evaluated", None, None)])["m"]
    assert "pass_rate" not in m and "pass_at_1" not in m


def test_pass_at_k_per_k_up_to_trial_count() -> None:
    # case a: 1 of 3 trials pass; case b: 3 of 3 pass.
    rows = [tr("a", 0, "graded", "pass", 1.0), tr("a", 1, "graded", "fail", 0.0),
            tr("a", 2, "error", "fail", 0.0)]
    rows += [tr("b", t, "graded", "pass", 1.0) for t in range(3)]
    m = suite_metrics(rows)["m"]
    assert {k for k in m if k.startswith("pass_at_")} == {"pass_at_1", "pass_at_2", "pass_at_3"}
    assert {k for k in m if k.startswith("pass_hat_")} == {"pass_hat_1", "pass_hat_2", "pass_hat_3"}
    assert m["pass_at_1"] == pytest.approx((1 / 3 + 1) / 2)
    assert m["pass_at_2"] == pytest.approx((pass_at_k(3, 1, 2) + 1) / 2)
    assert m["pass_at_3"] == pytest.approx(1.0)
    assert m["pass_hat_3"] == pytest.approx((0 + 1) / 2)  # unbiased: 1 of 3 passes gives pass^3 = 0
    assert m["pass_hat_2"] == pytest.approx((0 + 1) / 2)
    # A case with fewer trials caps k: no pass^3 when a case has only 2 trials.
    fewer = suite_metrics(rows[:2] + rows[3:])["m"]
    assert "pass_hat_3" not in fewer and "pass_at_3" not in fewer and "pass_hat_2" in fewer


def test_suite_metrics_per_target_and_overall() -> None:
    rows = [tr("a", 0, "graded", "pass", 1.0, target="x"), tr("a", 0, "graded", "fail", 0.0, target="y")]
    metrics = suite_metrics(rows)
    assert set(metrics) == {"x", "y", "*"}
    assert metrics["x"]["pass_rate"] == 1.0 and metrics["y"]["pass_rate"] == 0.0
    assert metrics["*"]["pass_rate"] == 0.5
    # (target, test) pairs: same test on two targets is two cases.
    assert metrics["*"]["cases"] == 2


def test_latency_percentiles_and_cost() -> None:
    rows = [tr(f"t{i}", 0, "graded", "pass", 1.0, latency=float(v), cost=0.01)
            for i, v in enumerate([10, 20, 30, 40, 100])]
    m = suite_metrics(rows)["m"]
    assert m["latency_p50_ms"] == 30.0
    assert m["latency_p95_ms"] == pytest.approx(88.0)  # 40 + (100-40)*0.8
    assert m["cost_usd"] == pytest.approx(0.05)


def test_percentile() -> None:
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([3.0, 1.0, 2.0], 100) == 3.0
    with pytest.raises(ValueError):
        percentile([], 50)


# ---- gates -------------------------------------------------------------------

def test_thresholds_as_gates() -> None:
    assert metric_for_threshold("pass@3") == "pass_at_3"
    assert metric_for_threshold("pass^3") == "pass_hat_3"
    assert metric_for_threshold("required_pass_rate") == "pass_rate"
    misses = failed_thresholds({"pass_rate": 0.8, "pass^3": 0.5, "pass@1": 0.5},
                               {"pass_rate": 0.9, "pass_hat_3": 0.4})
    assert misses == [("pass@1", None, 0.5), ("pass^3", 0.4, 0.5)]


def test_a_pass_hat_gate_beyond_the_trials_is_missing_with_the_reason() -> None:
    metrics = {"pass_rate": 0.9, "pass_at_1": 0.9, "pass_at_2": 0.95, "pass_hat_1": 0.9, "pass_hat_2": 0.8}
    assert failed_thresholds({"pass_hat_3": 0.7}, metrics) == [("pass_hat_3", None, 0.7)]
    assert missing_reason("pass_hat_3", metrics) == (
        "missing: pass_hat_3 needs at least 3 graded trials of every case (this run has 2 for its case "
        "with the fewest)")
    assert missing_reason("mean_score", metrics) == "missing"


# ---- versions ----------------------------------------------------------------

def test_latest_versions_semver_ordering() -> None:
    keys = ["calc@1.9.0", "calc@1.10.0", "calc@1.2.0", "pptx@2.0.0-rc1", "pptx@2.0.0", "pptx@1.99.0"]
    assert latest_versions(keys) == {"calc": "calc@1.10.0", "pptx": "pptx@2.0.0"}


def test_prerelease_sorts_before_release_and_semver_after_hashes() -> None:
    assert version_sort_key("2.0.0-rc1") < version_sort_key("2.0.0")
    assert version_sort_key("1.9.0") < version_sort_key("1.10.0")
    assert version_sort_key("h-abcdef0123") < version_sort_key("0.0.1")
    assert latest_versions(["s@h-aaaa", "s@0.1.0"]) == {"s": "s@0.1.0"}


def test_semver_precedence_of_prerelease_and_build() -> None:
    from eval_pipelines.analysis.versions import version_sort_key

    ordered = ["0.9", "1.0.0-alpha", "1.0.0-rc.2", "1.0.0-rc9", "1.0.0-rc10", "1.0.0"]
    assert sorted(reversed(ordered), key=version_sort_key) == ordered
    # Build metadata does not make a release a pre-release.
    assert version_sort_key("1.0.0+build.5")[:3] == version_sort_key("1.0.0")[:3]
