"""``contains_xml`` (promptfoo ``contains-xml``): some XML element (or run of sibling elements)
inside the output, prose around it allowed, is well-formed and holds the required elements.

The fragments tried and their order are promptfoo's (``_xml.candidates``). Scored 1 or 0;
``details.fragment`` is the fragment that passed.
"""

from __future__ import annotations

from eval_pipelines.grading.base import Grader, GradeInput, Outcome
from eval_pipelines.grading.graders import _xml
from eval_pipelines.grading.graders.is_xml import XmlParams


class ContainsXml(Grader[XmlParams]):
    type = "contains_xml"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = XmlParams

    def grade(self, params: XmlParams, inp: GradeInput) -> Outcome:
        verdict = _xml.contains(inp.output, params.required_elements)
        return Outcome.binary(verdict.valid, verdict.reason)
