"""Seed 002: a prompt with an evaluation mode, in its UI (camelCase) and export
(snake_case) spellings.

* ``llm`` mode: the prompt's ``evaluationCriteria`` is judged by the judge model
  for every case; empty criteria means the case is **not evaluated**.
* ``schema`` mode: each case's ``evaluationSchema`` (a JSON Schema, as a JSON
  string or an object) validates the output parsed as JSON (a fenced block is
  tolerated); an empty schema means **not evaluated**.

Not-evaluated cases carry no assertion, so scoring gives them the status
``not_evaluated``: never a pass, never a fail. ``expectedSchema`` shapes the
output and is kept in metadata; it is not the evaluation schema.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.spec.assertions import parse_assertion
from eval_pipelines.spec.errors import SpecError, SpecErrors, unknown_field_errors
from eval_pipelines.spec.models import Message, Suite, TestCase
from eval_pipelines.spec.source import Document

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
            input=[Message(content=case["input"])],
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
    content = raw.get("content")
    return Suite(
        name=str(raw.get("name") or doc.file.stem),
        description=raw.get("description"),
        format="prompt-modes",
        source_file=str(doc.file),
        system_prompt=content if isinstance(content, str) and content.strip() else None,
        tags=list(raw.get("tags") or []),
        tests=tests,
    ), []
