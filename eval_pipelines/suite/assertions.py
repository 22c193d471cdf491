"""Turn a raw ``assert`` item (any seed spelling) into a validated :class:`Assertion`.

The grader's own parameter model checks the type-specific fields now, at load
time, so an invalid regex or JSON Schema is a load error with a line number.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from eval_pipelines.grading.registry import get_grader, known_types
from eval_pipelines.suite.errors import SpecError, closest_key, pydantic_errors
from eval_pipelines.suite.models import Assertion
from eval_pipelines.suite.source import Document

__all__ = ["COMMON_FIELDS", "parse_assertion", "pydantic_errors"]

COMMON_FIELDS = ("type", "name", "weight", "required", "negate")
TYPES_EXPECTED = "an assertion type listed in docs/assertions.md (e.g. contains, equals, regex, llm_judge)"


def parse_assertion(
    raw: Any, doc: Document, path: tuple[Any, ...], errors: list[SpecError]
) -> Assertion | None:
    if not isinstance(raw, dict):
        errors.append(SpecError(str(doc.file), path, f"got {type(raw).__name__}",
                                doc.line_of(path), "a mapping with a `type` field"))
        return None
    type_name = raw.get("type")
    if not isinstance(type_name, str) or not type_name:
        errors.append(SpecError(str(doc.file), path + ("type",), "required field is missing",
                                doc.line_of(path), TYPES_EXPECTED))
        return None
    grader = get_grader(type_name)
    if grader is None:
        # One line: the closest type, not the list of every type (about 120 of them).
        guess = closest_key(type_name.replace("-", "_"), known_types())
        hint = f"; did you mean {guess!r}?" if guess else ""
        errors.append(SpecError(str(doc.file), path + ("type",),
                                f"unknown assertion type {type_name!r}{hint}",
                                doc.line_of(path + ("type",)), None if guess else TYPES_EXPECTED))
        return None
    config = {k: v for k, v in raw.items() if k not in COMMON_FIELDS}
    try:
        params = grader.Params.model_validate(config)
    except ValidationError as exc:
        known = list(grader.Params.model_fields) + list(COMMON_FIELDS)
        errors.extend(pydantic_errors(doc, path, exc, known))
        return None
    before = len(errors)
    for inner_path, inner in grader.nested_assertions(params):
        parse_assertion(inner, doc, path + inner_path, errors)
    if len(errors) > before:
        return None
    try:
        return Assertion(
            type=grader.type,
            name=raw.get("name"),
            weight=raw.get("weight", 1.0),
            required=raw.get("required", False),
            negate=raw.get("negate", False),
            config=config,
        )
    except ValidationError as exc:
        errors.extend(pydantic_errors(doc, path, exc))
        return None
