"""promptfoo's ``derivedMetrics``: named metrics computed from other named metrics.

promptfoo (docs configuration/expected-outputs "Creating derived metrics") works per
prompt and provider: each assertion's ``metric:`` name collects that assertion's score,
summed over the test evals of the prompt-provider pair (``__count`` holds how many evals
there were); then each derived metric's expression is evaluated in the order written,
later ones seeing earlier ones, a missing name reading 0.

Expressions here are arithmetic only, read with Python's ``ast`` and evaluated by a
small walker (never ``eval``): numbers, names, ``+ - * /``, ``**`` (mathjs ``^`` is read
as the same), unary signs and parentheses; no calls, attributes or subscripts. A
division by zero gives no value (None): the stored metric is left out and the report
says it is undefined, where mathjs would print Infinity or NaN.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass
from typing import Callable, Iterable

from eval_pipelines.spec.models import Suite

COUNT = "__count"
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class ExpressionError(ValueError):
    """An expression outside the arithmetic subset; the message says what is not allowed."""


def parse_expression(text: str) -> ast.expr:
    """The expression's syntax tree, checked to hold only what ``evaluate`` reads."""
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"not an arithmetic expression ({exc.msg})") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Name, ast.Load)) or type(node) in _BINARY \
                or type(node) in _UNARY:
            if isinstance(node, ast.BinOp) and type(node.op) not in _BINARY:
                raise ExpressionError(f"operator {type(node.op).__name__} is not allowed (only + - * / ** ^)")
            if isinstance(node, ast.UnaryOp) and type(node.op) not in _UNARY:
                raise ExpressionError(f"operator {type(node.op).__name__} is not allowed (only + - * / ** ^)")
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            continue
        what = "function calls" if isinstance(node, ast.Call) else type(node).__name__
        raise ExpressionError(f"{what} are not allowed (numbers, metric names, + - * / ** ^ and parentheses)")
    return tree


def names_in(tree: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def evaluate(tree: ast.expr, scope: dict[str, float]) -> float | None:
    """The expression's value over ``scope`` (a missing name reads 0, as in promptfoo);
    None when it divides by zero or does not give a finite number."""
    def walk(node: ast.expr) -> float:
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            return float(scope.get(node.id, 0.0))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](walk(node.operand))
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        raise ExpressionError(type(node).__name__)  # parse_expression let nothing else through

    try:
        value = walk(tree)
    except (ZeroDivisionError, OverflowError):
        return None
    if isinstance(value, complex) or not math.isfinite(value):
        return None
    return value


@dataclass(frozen=True)
class NamedScore:
    """One graded assertion that carries a ``metric:`` name, in one eval."""

    target: str
    prompt: str
    eval_key: tuple[str, int]  # (test_id, trial): one eval of the prompt-provider pair
    metric: str
    score: float
    weight: float


def named_totals(scores: Iterable[NamedScore], evals: Iterable[tuple[str, str, tuple[str, int]]]
                 ) -> dict[tuple[str, str], dict[str, float]]:
    """Per (target, prompt): each metric's value summed over evals, and ``__count``.

    Within one eval, assertions sharing a name give their weighted mean (promptfoo's
    named score is normalised by weight), or their plain mean when all weigh 0 (the
    F-score example counts with weight-0 assertions)."""
    per_eval: dict[tuple[str, str, tuple[str, int], str], list[tuple[float, float]]] = {}
    for s in scores:
        per_eval.setdefault((s.target, s.prompt, s.eval_key, s.metric), []).append((s.score, s.weight))
    totals: dict[tuple[str, str], dict[str, float]] = {}
    for target, prompt, key in set(evals):
        totals.setdefault((target, prompt), {}).setdefault(COUNT, 0.0)
        totals[(target, prompt)][COUNT] += 1
    for (target, prompt, _, metric), items in per_eval.items():
        weight = sum(w for _, w in items)
        value = (sum(s * w for s, w in items) / weight) if weight > 0 else sum(s for s, _ in items) / len(items)
        bucket = totals.setdefault((target, prompt), {COUNT: 0.0})
        bucket[metric] = bucket.get(metric, 0.0) + value
    return totals


def derive(totals: dict[str, float], metrics: list[tuple[str, ast.expr]]) -> dict[str, float | None]:
    """Each derived metric in order over the named totals (later ones see earlier ones)."""
    scope = dict(totals)
    out: dict[str, float | None] = {}
    for name, tree in metrics:
        value = evaluate(tree, scope)
        out[name] = value
        scope[name] = value if value is not None else 0.0  # promptfoo initialises every derived metric to 0
    return out


PREFIX = "derived:"  # metric rows: derived:NAME (derived:NAME [prompt] when the suite has several prompts)


def suite_derived(suite: Suite, outputs: Iterable[tuple[str, str, int]],
                  graded: Iterable[tuple[str, str, int, int, float, float]]
                  ) -> tuple[dict[str, dict[str, float]], list[str]]:
    """The suite's derived metrics per target, from its outputs ``(test_id, target, trial)`` and
    their grades ``(test_id, target, trial, assertion_index, score, weight)``; only assertions
    named with ``metric:`` count. Returns the values by target and, for each value that is
    undefined (a division by zero), a line saying so."""
    if not suite.derived_metrics:
        return {}, []
    cases = {c.id: c for c in suite.tests}
    prompt_of = {c.id: str(c.metadata.get("prompt", "")) for c in suite.tests}
    several = len(set(prompt_of.values())) > 1
    scores = []
    for test_id, target, trial, index, score, weight in graded:
        case = cases.get(test_id)
        if case is None or index >= len(case.assertions) or case.assertions[index].name is None:
            continue
        scores.append(NamedScore(target, prompt_of[test_id], (test_id, trial), case.assertions[index].name,
                                 score, weight))
    evals = [(target, prompt_of.get(test_id, ""), (test_id, trial)) for test_id, target, trial in outputs]
    trees = [(m.name, parse_expression(m.value)) for m in suite.derived_metrics]
    values: dict[str, dict[str, float]] = {}
    undefined: list[str] = []
    for (target, prompt), totals in sorted(named_totals(scores, evals).items()):
        for name, value in derive(totals, trees).items():
            label = PREFIX + name + (f" [{prompt}]" if several else "")
            if value is None:
                undefined.append(f"{label} on {target}: undefined (division by zero)")
            else:
                values.setdefault(target, {})[label] = value
    return values, undefined
