"""promptfoo's ``derivedMetrics``: named metrics computed from other named metrics.

promptfoo (docs configuration/expected-outputs "Creating derived metrics") works per
prompt and provider: each assertion's ``metric:`` name collects that assertion's score,
summed over the test evals of the prompt-provider pair (``__count`` holds how many evals
there were); then each derived metric's expression is evaluated in the order written,
later ones seeing earlier ones, a missing name reading 0.

Expressions are read as mathjs reads them (promptfoo evaluates them with mathjs's
``evaluate``), for the subset metrics need: numbers, names, ``+ - * /``, ``^`` (power),
unary signs, parentheses, comparisons (``> < >= <= == !=``, true reading 1), ``and``/``or``/
``not``, the conditional ``c ? a : b`` (promptfoo's F-score example guards its divisions with
it) and the functions ``abs min max sqrt round floor ceil log exp``. The text is turned into a
Python expression and read with ``ast``; a small walker evaluates it (never ``eval``): no
attributes, subscripts, strings or other calls. A division by zero gives no value (None): the
stored metric is left out and the report says it is undefined, where mathjs would print
Infinity or NaN.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from eval_pipelines.suite.models import Suite

COUNT = "__count"
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: lambda v: float(not v)}
_COMPARE: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Gt: operator.gt, ast.Lt: operator.lt, ast.GtE: operator.ge, ast.LtE: operator.le,
    ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _round(value: float, digits: float = 0) -> float:
    """mathjs's round: half away from zero (Python's ``round`` goes to even: 2.5 -> 2)."""
    scale = 10 ** int(digits)
    return math.copysign(math.floor(abs(value) * scale + 0.5), value) / scale


_FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": abs, "min": min, "max": max, "sqrt": math.sqrt, "round": _round, "floor": math.floor,
    "ceil": math.ceil, "log": math.log, "exp": math.exp}
_ALLOWED = "numbers, metric names, + - * / ^, comparisons, and/or/not, c ? a : b, " + " ".join(_FUNCTIONS)


class ExpressionError(ValueError):
    """An expression outside the subset read here; the message says what is not allowed."""


def _matching(text: str, start: int) -> int:
    """The index of the parenthesis closing the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ExpressionError("not an arithmetic expression (unbalanced parentheses)")


def _conditionals(text: str) -> str:
    """mathjs's ``c ? a : b`` (right-associative, lowest precedence) as Python's ``a if c else b``,
    inside parentheses first."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "(":
            end = _matching(text, i)
            inner = ",".join(_conditionals(part) for part in _split_top(text[i + 1:end], ","))
            out.append(f"({inner})")
            i = end + 1
        elif text[i] == ")":
            raise ExpressionError("not an arithmetic expression (unbalanced parentheses)")
        else:
            out.append(text[i])
            i += 1
    flat = "".join(out)
    parts = _split_top(flat, "?", limit=1)
    if len(parts) == 1:
        if any(ch == ":" for _, ch in _at_top(flat)):
            raise ExpressionError("not an arithmetic expression (`:` without `?`)")
        return flat
    condition, rest = parts
    pending = 0
    for j, ch in _at_top(rest):
        if ch == "?":
            pending += 1
        elif ch == ":":
            if pending == 0:
                return f"({_conditionals(rest[:j])}) if ({condition}) else ({_conditionals(rest[j + 1:])})"
            pending -= 1
    raise ExpressionError("not an arithmetic expression (`?` without `:`)")


def _at_top(text: str) -> Iterator[tuple[int, str]]:
    """Each character outside parentheses, with its index."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            yield i, ch


def _split_top(text: str, sep: str, limit: int = -1) -> list[str]:
    parts, start = [], 0
    for i, ch in _at_top(text):
        if ch == sep and (limit < 0 or len(parts) < limit):
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def parse_expression(text: str) -> ast.expr:
    """The expression's syntax tree, checked to hold only what ``evaluate`` reads."""
    source = text.strip().replace("**", "^")
    if re.search(r"\b(if|else|lambda)\b", source):  # Python's own forms: mathjs has none of them
        raise ExpressionError(f"Python keywords are not allowed ({_ALLOWED})")
    try:
        tree = ast.parse(_conditionals(source).replace("^", "**"), mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"not an arithmetic expression ({exc.msg})") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) not in _BINARY \
                or isinstance(node, ast.UnaryOp) and type(node.op) not in _UNARY \
                or isinstance(node, ast.Compare) and any(type(op) not in _COMPARE for op in node.ops):
            op = node.op if not isinstance(node, ast.Compare) else node.ops[0]
            raise ExpressionError(f"operator {type(op).__name__} is not allowed ({_ALLOWED})")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
                                               and not node.keywords):
            raise ExpressionError(f"function calls other than {' '.join(_FUNCTIONS)} are not allowed")
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Call, ast.Name,
                             ast.Load, ast.And, ast.Or)) or type(node) in _BINARY or type(node) in _UNARY \
                or type(node) in _COMPARE:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            continue
        raise ExpressionError(f"{type(node).__name__} is not allowed ({_ALLOWED})")
    return tree


def names_in(tree: ast.expr) -> set[str]:
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called}


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
        if isinstance(node, ast.Compare):  # a chain, as Python reads it; true is 1
            values = [walk(node.left), *(walk(c) for c in node.comparators)]
            return float(all(_COMPARE[type(op)](a, b) for op, a, b in zip(node.ops, values, values[1:])))
        if isinstance(node, ast.BoolOp):
            values = [walk(v) for v in node.values]
            return float(all(values) if isinstance(node.op, ast.And) else any(values))
        if isinstance(node, ast.IfExp):  # only the branch taken is evaluated: a guard avoids its division
            return walk(node.body) if walk(node.test) else walk(node.orelse)
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            return float(_FUNCTIONS[node.func.id](*(walk(a) for a in node.args)))
        raise ExpressionError(type(node).__name__)  # parse_expression let nothing else through

    try:
        value = walk(tree)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError):  # log(0), sqrt(-1), min()
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
