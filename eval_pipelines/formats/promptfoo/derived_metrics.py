"""promptfoo ``derivedMetrics`` read into ``Suite.derived_metrics``.

Each entry is ``{name, value}``; ``value`` is a mathjs expression over named metrics
(checked now with ``analysis.derived_metrics.parse_expression``, which says what subset it
reads: arithmetic, comparisons, logic, ``c ? a : b``, a few functions). A JavaScript function (``function(namedScores, evalStep) {...}``)
is refused in one line, as is anything else the expression reader does not take.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.analysis.derived_metrics import ExpressionError, parse_expression
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.models import DerivedMetric
from eval_pipelines.suite.source import Document
from eval_pipelines.formats import compat

KEYS = {"name", "value"}


def parse_derived_metrics(ctx: LoadContext, doc: Document, raw: Any) -> list[DerivedMetric]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        ctx.error(doc, ("derivedMetrics",), f"got {type(raw).__name__}", "a list of {name, value}")
        return []
    out: list[DerivedMetric] = []
    for i, item in enumerate(raw):
        path = ("derivedMetrics", i)
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or "value" not in item:
            ctx.error(doc, path, "invalid derived metric", "{name, value: an arithmetic expression}")
            continue
        compat.unknown_fields(ctx, doc, path, item, KEYS)
        value = item["value"]
        if isinstance(value, str) and (value.lstrip().startswith(("function", "async ")) or "=>" in value):
            ctx.error(doc, path + ("value",), "JavaScript functions in derivedMetrics are not supported",
                      "an arithmetic expression over metric names")
            continue
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            ctx.error(doc, path + ("value",), f"got {type(value).__name__}", "an arithmetic expression")
            continue
        try:
            parse_expression(str(value))
        except ExpressionError as exc:
            ctx.error(doc, path + ("value",), f"{exc}", "an arithmetic expression over metric names")
            continue
        out.append(DerivedMetric(name=item["name"], value=str(value)))
    return out
