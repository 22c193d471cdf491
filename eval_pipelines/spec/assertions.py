"""Turn a raw ``assert`` item (any seed spelling) into a validated :class:`Assertion`.

The grader's own parameter model checks the type-specific fields now, at load
time, so an invalid regex or JSON Schema is a load error with a line number.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from eval_pipelines.graders.registry import get_grader, known_types
from eval_pipelines.spec.errors import SpecError, closest_key, unknown_field
from eval_pipelines.spec.models import Assertion
from eval_pipelines.spec.source import Document

COMMON_FIELDS = ("type", "name", "weight", "required", "negate")


def pydantic_errors(
    doc: Document, base: tuple[Any, ...], exc: ValidationError, known: list[str] | None = None
) -> list[SpecError]:
    """Map a pydantic error to SpecErrors at the right file line and path."""
    out: list[SpecError] = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        path = base + loc
        kind = err["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1]) if loc else "?"
            out.append(SpecError(str(doc.file), path, unknown_field(key, known or []), doc.line_of(path)))
        elif kind == "missing":
            out.append(SpecError(str(doc.file), path, "required field is missing", doc.line_of(path)))
        else:
            message = err["msg"].removeprefix("Value error, ")
            out.append(SpecError(str(doc.file), path, message, doc.line_of(path)))
    return out


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
                                doc.line_of(path), "one of: " + ", ".join(known_types())))
        return None
    grader = get_grader(type_name)
    if grader is None:
        guess = closest_key(type_name.replace("-", "_"), known_types())
        hint = f"; did you mean {guess!r}?" if guess else ""
        errors.append(SpecError(str(doc.file), path + ("type",),
                                f"unknown assertion type {type_name!r}{hint}",
                                doc.line_of(path + ("type",)), "one of: " + ", ".join(known_types())))
        return None
    config = {k: v for k, v in raw.items() if k not in COMMON_FIELDS}
    try:
        grader.Params.model_validate(config)
    except ValidationError as exc:
        known = list(grader.Params.model_fields) + list(COMMON_FIELDS)
        errors.extend(pydantic_errors(doc, path, exc, known))
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
