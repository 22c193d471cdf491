"""promptfoo's derivedMetrics (docs configuration/expected-outputs "Creating derived metrics"):
arithmetic over named metrics summed per prompt and provider, in order, missing names 0."""

from __future__ import annotations

import pytest

from eval_pipelines.analysis.derived_metrics import (
    COUNT, ExpressionError, NamedScore, derive, evaluate, named_totals, parse_expression,
)


@pytest.mark.parametrize("text", ["__import__('os')", "a.b", "a[0]", "x if y else z", "lambda: 1",
                                  "'text'", "a; b", "a % 2", "True", "a ? b", "a : b", "(a + b", "a + b)",
                                  "max(a, key=b)", "print(a)", "a ? b : c : d"])
def test_only_arithmetic_is_read(text: str) -> None:
    with pytest.raises(ExpressionError):
        parse_expression(text)


def test_expressions_follow_the_arithmetic_and_division_by_zero_is_undefined() -> None:
    scope = {"tp": 3.0, "fp": 1.0, "fn": 2.0}
    assert evaluate(parse_expression("2 * tp / (2 * tp + fp + fn)"), scope) == pytest.approx(6 / 9)
    assert evaluate(parse_expression("-tp ^ 2 + 2 ** 3"), scope) == pytest.approx(-9 + 8)  # mathjs ^ is power
    assert evaluate(parse_expression("missing + 1"), scope) == 1.0  # a missing metric reads 0
    assert evaluate(parse_expression("tp / (fp - 1)"), scope) is None
    assert evaluate(parse_expression("(0 - 1) ** 0.5"), scope) is None  # not a real number


def test_mathjs_conditionals_comparisons_logic_and_functions() -> None:
    # promptfoo's eval-f-score example guards each division with mathjs's conditional.
    precision = parse_expression("true_positives + false_positives > 0 ? "
                                 "true_positives / (true_positives + false_positives) : 0")
    assert evaluate(precision, {"true_positives": 3.0, "false_positives": 1.0}) == pytest.approx(0.75)
    assert evaluate(precision, {}) == 0.0  # no division by zero: only the branch taken is evaluated
    scope = {"a": 2.0, "b": 5.0}
    assert evaluate(parse_expression("a > b ? 1 : a == 2 ? 2 : 3"), scope) == 2.0  # right-associative
    assert evaluate(parse_expression("(a < b ? a : b) * 10"), scope) == 20.0
    assert evaluate(parse_expression("max(a, b ? 7 : 8) + min(a, b)"), scope) == 9.0
    assert evaluate(parse_expression("a >= 2 and not (b != 5) or 0"), scope) == 1.0
    assert evaluate(parse_expression("sqrt(b - a - 3) + round(2.4) + abs(-a) ^ 2"), scope) == 6.0
    assert evaluate(parse_expression("log(a - 2)"), scope) is None  # mathjs: -Infinity
    assert evaluate(parse_expression("round(2.5) + round(-2.5) + round(0.125, 2)"), scope) == pytest.approx(0.13)


def test_named_scores_sum_per_prompt_and_provider_and_derive_in_order() -> None:
    evals = [("a", "p", ("t1", 0)), ("a", "p", ("t2", 0)), ("b", "p", ("t1", 0))]
    scores = [NamedScore("a", "p", ("t1", 0), "acc", 1.0, 1.0), NamedScore("a", "p", ("t1", 0), "acc", 0.0, 3.0),
              NamedScore("a", "p", ("t2", 0), "acc", 1.0, 1.0), NamedScore("a", "p", ("t2", 0), "tp", 1.0, 0.0),
              NamedScore("a", "p", ("t2", 0), "tp", 0.0, 0.0), NamedScore("b", "p", ("t1", 0), "acc", 1.0, 1.0)]
    totals = named_totals(scores, evals)
    # t1: weighted mean 0.25; t2: 1 -> 1.25 over two evals. All-zero weights: the plain mean.
    assert totals[("a", "p")] == {COUNT: 2.0, "acc": 1.25, "tp": 0.5}
    assert totals[("b", "p")] == {COUNT: 1.0, "acc": 1.0}
    trees = [("mean_acc", parse_expression("acc / __count")), ("twice", parse_expression("mean_acc * 2")),
             ("bad", parse_expression("acc / tp")), ("after_bad", parse_expression("bad + 1"))]
    assert derive(totals[("a", "p")], trees) == {"mean_acc": 0.625, "twice": 1.25, "bad": 2.5, "after_bad": 3.5}
    assert derive(totals[("b", "p")], trees) == {"mean_acc": 1.0, "twice": 2.0, "bad": None, "after_bad": 1.0}
