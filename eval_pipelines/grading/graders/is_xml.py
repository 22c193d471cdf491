"""``is_xml`` (promptfoo ``is-xml``): the whole output is a well-formed XML document holding the
required elements (dotted paths, ``analysis.sentiment``); see ``_xml`` for how they are read.

Scored 1 or 0; ``details.missing`` lists the required paths absent from a well-formed document.
"""

from __future__ import annotations

from pydantic import field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders import _xml


class XmlParams(Params):
    # Dotted element paths that must exist (promptfoo's `value` / `value.requiredElements`).
    required_elements: list[str] | None = None

    @field_validator("required_elements")
    @classmethod
    def _paths(cls, value: list[str] | None) -> list[str] | None:
        return value or None


class IsXml(Grader[XmlParams]):
    type = "is_xml"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = XmlParams

    def grade(self, params: XmlParams, inp: GradeInput) -> Outcome:
        verdict = _xml.check(inp.output, params.required_elements, whole_document=True)
        absent = _xml.missing(_xml.parse(inp.output, True), params.required_elements) \
            if verdict.well_formed and not verdict.valid else []
        return Outcome.binary(verdict.valid, verdict.reason, missing=absent)
