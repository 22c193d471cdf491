"""``is_html`` (promptfoo ``is-html``): the whole output is HTML: parsed as an HTML5 document, no
text stands beside its elements and it holds a recognised element (see ``_html.validate``).

Scored 1 or 0 with promptfoo's reasons (``Output must be wrapped in HTML tags``, ...).
"""

from __future__ import annotations

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders import _html


class HtmlParams(Params):
    pass


class IsHtml(Grader[HtmlParams]):
    type = "is_html"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = HtmlParams

    def grade(self, params: HtmlParams, inp: GradeInput) -> Outcome:
        valid, reason = _html.validate(inp.output)
        return Outcome.binary(valid, reason)
