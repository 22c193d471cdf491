"""``contains_html`` (promptfoo ``contains-html``): the output holds HTML somewhere, by promptfoo's
indicator count (``_html.indicators``: at least 2), so ``a < b`` or one ``<example>`` is not HTML.

Scored 1 or 0; ``details.indicators`` is the count.
"""

from __future__ import annotations

from eval_pipelines.grading.base import Grader, GradeInput, Outcome
from eval_pipelines.grading.graders import _html
from eval_pipelines.grading.graders.is_html import HtmlParams


class ContainsHtml(Grader[HtmlParams]):
    type = "contains_html"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = HtmlParams

    def grade(self, params: HtmlParams, inp: GradeInput) -> Outcome:
        found = _html.contains(inp.output)
        count = _html.indicators(inp.output) if len(inp.output) <= _html.MAX_INPUT else 0
        return Outcome.binary(found, "output contains HTML content" if found
                              else "Expected output to contain HTML content", indicators=count)
