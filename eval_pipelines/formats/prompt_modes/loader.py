"""Seed 002: a prompt with an evaluation mode, in its UI (camelCase) and export
(snake_case) spellings.

* ``llm`` mode: the prompt's ``evaluationCriteria`` is judged by the judge model
  for every case; empty criteria means the case is **not evaluated**.
* ``schema`` mode: each case's ``evaluationSchema`` (a JSON Schema, as a JSON
  string or an object) validates the output parsed as JSON (a fenced block is
  tolerated); an empty schema means **not evaluated**.

Not-evaluated cases carry no assertion, so scoring gives them the status
``not_evaluated``: never a pass, never a fail.

The prompt's ``content`` is the system prompt. It is stored as each case's first
(system) message, so the target receives it and the judge reads it as context
with the input, as the seed's LLM mode asks. ``variables`` (the prompt's, then
the case's) replace ``{{name}}`` in the content and the input. ``model`` runs
the suite's OpenAI-compatible targets with that model; ``expectedSchema``
"shapes the model output": it is sent to them as structured output
(``response_format``). It is not the evaluation schema.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.suite.assertions import parse_assertion
from eval_pipelines.suite.errors import SpecError, SpecErrors, unknown_field_errors
from eval_pipelines.formats.skill_tests.loader import substitute
from eval_pipelines.suite.models import Message, Suite, TestCase
from eval_pipelines.suite.source import Document
from eval_pipelines.suite.tags import tag_list

ALIASES = {
    "evaluation_mode": "evaluationMode",
    "evaluation_criteria": "evaluationCriteria",
    "evaluation_schema": "evaluationSchema",
    "expected_schema": "expectedSchema",
    "test_cases": "testCases",
    "system_prompt": "content",
    "prompt": "content",
    "expected_output": "expectedOutput",
}
PROMPT_KEYS = {"id", "name", "description", "content", "evaluationMode", "evaluationCriteria",
               "expectedSchema", "testCases", "model", "variables", "tags"}
CASE_KEYS = {"id", "name", "input", "evaluationSchema", "expectedOutput", "variables", "metadata"}


def is_prompt_modes(data: Any) -> bool:
    return isinstance(data, dict) and bool({"evaluationMode", "evaluation_mode"} & data.keys())


def _normalise(raw: dict[str, Any]) -> dict[str, Any]:
    return {ALIASES.get(k, k): v for k, v in raw.items()}


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == {}


def load_prompt_modes(doc: Document) -> tuple[Suite, list[str]]:
    errors: list[SpecError] = []

    def error(path: tuple[Any, ...], message: str, expected: str | None = None) -> None:
        errors.append(SpecError(str(doc.file), path, message, doc.line_of(path), expected))

    raw = _normalise(doc.data)
    errors.extend(unknown_field_errors(doc, (), raw, PROMPT_KEYS, PROMPT_KEYS | set(ALIASES)))
    mode = raw.get("evaluationMode")
    if mode not in ("llm", "schema"):
        error(("evaluationMode",), f"unknown evaluation mode {mode!r}", '"llm" or "schema"')
    criteria = raw.get("evaluationCriteria")
    if criteria is not None and not isinstance(criteria, str):
        error(("evaluationCriteria",), "invalid criteria", "a string (empty means not evaluated)")
        criteria = None
    variables = _variables(raw.get("variables"), ("variables",), error)
    content = raw.get("content")
    if content is not None and not isinstance(content, str):
        error(("content",), f"got {type(content).__name__}", "the prompt text (a string)")
        content = None
    system = substitute(content, variables) if content and content.strip() else None
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        error(("model",), f"invalid model {model!r}", "a model name")
        model = None
    expected_schema = _schema(raw.get("expectedSchema"), ("expectedSchema",), error)
    cases_raw = raw.get("testCases")
    if not isinstance(cases_raw, list) or not cases_raw:
        error(("testCases",), "required field is missing" if cases_raw is None else "no test cases",
              "a non-empty list of test cases")
        cases_raw = []
    tests: list[TestCase] = []
    for i, case_raw in enumerate(cases_raw):
        path: tuple[Any, ...] = ("testCases", i)
        if not isinstance(case_raw, dict):
            error(path, f"got {type(case_raw).__name__}", "a test case mapping")
            continue
        case = _normalise(case_raw)
        errors.extend(unknown_field_errors(doc, path, case, CASE_KEYS, CASE_KEYS | set(ALIASES)))
        if not isinstance(case.get("input"), str):
            error(path + ("input",), "required field is missing" if "input" not in case else "invalid input",
                  "a string (the user message)")
            continue
        own = _variables(case.get("variables"), path + ("variables",), error)
        text = substitute(case["input"], {**variables, **own})
        assertions = []
        if mode == "llm" and not _empty(criteria):
            parsed = parse_assertion({"type": "llm_judge", "name": "evaluation-criteria"}, doc,
                                     ("evaluationCriteria",), errors)
            assertions = [parsed] if parsed else []
        elif mode == "schema" and not _empty(case.get("evaluationSchema")):
            schema = case["evaluationSchema"]
            if isinstance(schema, str):
                try:
                    schema = json.loads(schema)
                except json.JSONDecodeError as exc:
                    error(path + ("evaluationSchema",), f"not valid JSON: {exc.msg}", "a JSON Schema")
                    continue
            parsed = parse_assertion({"type": "json_schema", "name": "evaluation-schema", "schema": schema,
                                      "allow_fence": True}, doc, path + ("evaluationSchema",), errors)
            assertions = [parsed] if parsed else []
        tests.append(TestCase(
            id=str(case.get("id") or f"case-{i + 1}"),
            name=case.get("name"),
            input=([Message(role="system", content=system)] if system else []) + [Message(content=text)],
            expected_output=case.get("expectedOutput"),
            criteria=criteria if mode == "llm" and not _empty(criteria) else None,
            assertions=assertions,
            metadata={**(case.get("metadata") or {}), "evaluation_mode": mode,
                      "evaluated": bool(assertions)},
            source_file=str(doc.file),
            source_line=doc.line_of(path),
        ))
    if errors:
        raise SpecErrors(errors)
    return Suite(
        name=str(raw.get("name") or doc.file.stem),
        description=raw.get("description"),
        format="prompt-modes",
        source_file=str(doc.file),
        # The prompt travels in each case's messages; "" (not None): no SKILL.md body is added.
        system_prompt="" if system else None,
        model=model,
        response_schema=expected_schema,
        tags=tag_list(raw.get("tags")),
        tests=tests,
    ), []


def _variables(raw: Any, path: tuple[Any, ...], error: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, (str, int, float, bool)) for v in raw.values()):
        error(path, "invalid variables", "a mapping of name to text")
        return {}
    return raw


def _schema(raw: Any, path: tuple[Any, ...], error: Any) -> dict[str, Any] | None:
    """``expectedSchema``: a JSON Schema object, or its JSON text; empty means none."""
    if _empty(raw):
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            error(path, f"not valid JSON: {exc.msg}", "a JSON Schema")
            return None
    if not isinstance(raw, dict):
        error(path, f"got {type(raw).__name__}", "a JSON Schema object")
        return None
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    try:
        validator_for(raw, default=Draft202012Validator).check_schema(raw)
    except SchemaError as exc:
        error(path, f"invalid JSON Schema: {exc.message}", "a JSON Schema")
        return None
    return raw
