"""``contains_json`` (promptfoo's ``contains-json``): the output holds a JSON object or array
somewhere in its text (prose around it allowed), matching ``value`` as a JSON Schema when given.

Scored 1 or 0; ``details.found`` counts the JSON values found.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


class ContainsJsonParams(Params):
    value: dict[str, Any] | None = None

    @field_validator("value")
    @classmethod
    def _schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            from jsonschema.validators import Draft202012Validator, validator_for

            validator_for(value, default=Draft202012Validator).check_schema(value)
        return value


def json_values(text: str) -> list[Any]:
    """Every JSON object or array that starts at a ``{`` or ``[`` of ``text`` and parses."""
    decoder = json.JSONDecoder()
    found, pos = [], 0
    while pos < len(text):
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        found.append(value)
        pos = end
    return found


class ContainsJson(Grader[ContainsJsonParams]):
    type = "contains_json"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = ContainsJsonParams

    def grade(self, params: ContainsJsonParams, inp: GradeInput) -> Outcome:
        values = json_values(inp.output)
        if not values:
            return Outcome.binary(False, "no JSON object or array in the output", found=0)
        if params.value is None:
            return Outcome.binary(True, f"found {len(values)} JSON value(s)", found=len(values))
        from jsonschema.validators import Draft202012Validator, validator_for

        validator = validator_for(params.value, default=Draft202012Validator)(params.value)
        errors = []
        for value in values:
            problem = next(iter(validator.iter_errors(value)), None)
            if problem is None:
                return Outcome.binary(True, "a JSON value matches the schema", found=len(values))
            errors.append(problem.message)
        return Outcome.binary(False, f"no JSON value matches the schema: {errors[0]}", found=len(values))
