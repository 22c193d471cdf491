"""The tools a suite offers a model (name, JSON-schema parameters, canned results), and the rule
that merges a suite's default tools with a test's own. Part of the suite model (``models``
re-exports them)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from eval_pipelines.suite.base_model import Model


TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
DEFAULT_MAX_STEPS = 8


def tool_parameters_problem(schema: Any) -> tuple[tuple[Any, ...], str] | None:
    """Why ``schema`` cannot be a tool's ``parameters``: (path inside it, message), or None.

    It must be a JSON Schema (checked against its metaschema with jsonschema's
    ``check_schema``) describing an object, as function calling requires.
    """
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    if not isinstance(schema, dict):
        return (), f"got {type(schema).__name__}; expected a JSON Schema mapping"
    if schema.get("type") != "object":
        return ("type",), 'tool parameters must be a JSON Schema with `type: object`'
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        return tuple(exc.path), f"invalid JSON Schema: {exc.message}"
    return None


class CannedResult(Model):
    """A tool result used when every ``when`` argument equals the call's (subset match)."""

    when: dict[str, Any] = Field(default_factory=dict)
    result: Any


class ToolSpec(Model):
    """A tool a test offers the model, with canned results instead of an implementation.

    A call is answered by the first ``results`` entry whose ``when`` arguments
    all equal the call's, else by ``result`` (returned for every call), else by
    ``{"error": "no canned result for these arguments"}``. ``result: null``
    counts as no default.
    """

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    result: Any = None
    results: list[CannedResult] = Field(default_factory=list)

    @field_validator("parameters")
    @classmethod
    def _parameters_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        problem = tool_parameters_problem(value)
        if problem is not None:
            path, message = problem
            where = ".".join(str(p) for p in path)
            raise ValueError(f"{message}" + (f" (at parameters.{where})" if where else ""))
        return value


def _unique_tools(tools: list[ToolSpec]) -> list[ToolSpec]:
    names = [t.name for t in tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate tool name(s) {duplicates}")
    return tools


def merge_tools(defaults: list[ToolSpec], own: list[ToolSpec]) -> list[ToolSpec]:
    """The suite's tools not overridden by name, then the test's own (idempotent)."""
    names = {t.name for t in own}
    return [t for t in defaults if t.name not in names] + list(own)
