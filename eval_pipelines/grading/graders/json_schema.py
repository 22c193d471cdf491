"""``json_schema`` (000 strategy, 002 schema mode): validate JSON output against a schema.

Draft 2020-12 unless the schema names another ``$schema``. Remote ``$ref`` URLs
are never fetched: the registry has no retriever, so they are reported as
unresolvable instead of reaching the network; a schema naming one, or whose
``$ref`` chain goes round in a circle (which would recurse without end while
validating), is refused when the suite loads.
"""

from __future__ import annotations

from typing import Any

import re
from urllib.parse import unquote

import jsonschema
from jsonschema.validators import validator_for
from pydantic import AliasChoices, Field, field_validator
from referencing import Registry
from referencing.exceptions import Unresolvable

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import parse_json_output


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, registry=Registry())


def _json_path(path: Any) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                found.append(item["$ref"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _pointer(schema: Any, ref: str) -> Any:
    """The sub-schema a local ``#/a/b`` reference names (KeyError when none)."""
    node = schema
    for part in ref[2:].split("/") if ref not in ("#", "#/") else []:
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def ref_problem(schema: dict[str, Any]) -> str | None:
    """Why the schema's ``$ref`` use cannot work offline, or None."""
    for ref in _refs(schema):
        if _SCHEME.match(ref) or not ref.startswith("#"):
            return (f"$ref {ref!r} names another document; remote and external references are never "
                    "fetched (inline the schema or use a local '#/...' reference)")
        if ref not in ("#", "#/") and not ref.startswith("#/"):
            continue  # a named anchor: left to the validator
        seen = [ref]
        target = ref
        while True:
            try:
                node = _pointer(schema, target)
            except (KeyError, IndexError, ValueError, TypeError):
                return f"$ref {target!r} points at nothing in the schema"
            nxt = node.get("$ref") if isinstance(node, dict) else None
            if not isinstance(nxt, str) or not (nxt in ("#", "#/") or nxt.startswith("#/")):
                break
            if nxt in seen:
                return "circular $ref: " + " -> ".join(seen + [nxt])
            seen.append(nxt)
            target = nxt
    return None


class JsonSchemaParams(Params):
    # `schema` in YAML; `value` as in the other 001 types.
    schema_: dict[str, Any] | bool = Field(
        default=True, validation_alias=AliasChoices("schema", "value")
    )
    # prompt `schema` mode tolerates a fenced ```json block around the output.
    allow_fence: bool = True

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | bool) -> dict[str, Any] | bool:
        if isinstance(schema, bool):
            return schema
        try:
            validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = _json_path(exc.path)
            raise ValueError(f"invalid JSON Schema at {where}: {exc.message}") from None
        problem = ref_problem(schema)
        if problem:
            raise ValueError(f"invalid JSON Schema: {problem}")
        return schema


class JsonSchema(Grader[JsonSchemaParams]):
    type = "json_schema"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("schema", "is_valid_json_schema")
    Params = JsonSchemaParams

    def grade(self, params: JsonSchemaParams, inp: GradeInput) -> Outcome:
        try:
            document = parse_json_output(inp.output, allow_fence=params.allow_fence)
        except ValueError as exc:
            return Outcome.binary(False, str(exc), schema_errors=[{"path": "$", "message": str(exc)}])
        schema = params.schema_
        if isinstance(schema, bool):
            schema = {} if schema else {"not": {}}
        try:
            errors = sorted(_validator(schema).iter_errors(document), key=lambda e: list(e.path))
        except Unresolvable as exc:
            return Outcome(0.0, f"schema reference cannot be resolved (remote refs are not fetched): {exc}",
                           status="error")
        found = [{"path": _json_path(e.absolute_path), "message": e.message} for e in errors]
        if found:
            return Outcome.binary(False, f"{len(found)} schema error(s): {found[0]['message']}",
                                  schema_errors=found)
        return Outcome.binary(True, "output matches the schema", schema_errors=[])
