"""A JSON Schema of the eval spec YAML (seed 001), for editors.

Assertion entries are built from each grader's own parameter model, so the
schema and the loader cannot disagree about a type's fields.
``eval-pipelines schema > eval-suite.schema.json`` writes it.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.grading.registry import graders_by_name

COMMON_ASSERT_FIELDS: dict[str, Any] = {
    "type": {"type": "string"},
    "name": {"type": "string", "description": "identifier, used by composite aggregator weights"},
    "weight": {"type": "number", "minimum": 0, "default": 1.0, "description": "outer weight in the test score"},
    "required": {
        "description": "gate: true = score must reach 0.8; a number = its own minimum score",
        "anyOf": [{"type": "boolean"}, {"type": "number", "minimum": 0, "maximum": 1}],
    },
    "negate": {"type": "boolean", "default": False},
}


def _assertion_schemas() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    variants: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    seen: set[int] = set()
    for grader in sorted(graders_by_name().values(), key=lambda g: g.type):
        if id(grader) in seen:
            continue
        seen.add(id(grader))
        params = grader.Params.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
        defs.update(params.pop("$defs", {}))
        names = sorted({grader.type, *grader.aliases, *(n.replace("_", "-") for n in (grader.type, *grader.aliases))})
        properties = dict(COMMON_ASSERT_FIELDS) | {"type": {"enum": names}}
        for key, value in params.get("properties", {}).items():
            properties[key] = value
        variants.append({
            "title": grader.type,
            "description": (type(grader).__doc__ or "").strip().splitlines()[0] if type(grader).__doc__ else grader.type,
            "type": "object",
            "properties": properties,
            "required": sorted({"type", *params.get("required", [])}),
            "additionalProperties": False,
        })
    return variants, defs


def eval_suite_schema() -> dict[str, Any]:
    variants, defs = _assertion_schemas()
    defs["assertion"] = {"oneOf": variants}
    message = {
        "type": "object",
        "required": ["content"],
        "properties": {
            "role": {"enum": ["system", "user", "assistant", "tool"]},
            "content": {"anyOf": [{"type": "string"}, {"type": "array"}]},
        },
    }
    defs["input"] = {"anyOf": [{"type": "string"}, {"type": "array", "items": message, "minItems": 1}]}
    execution = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "targets": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
            "target": {"type": "string"},
            "trials": {"anyOf": [{"type": "integer", "minimum": 1}, {
                "type": "object", "additionalProperties": False,
                "properties": {"count": {"type": "integer", "minimum": 1},
                               "strategy": {"enum": ["pass_at_k", "mean", "confidence_interval", "all"]},
                               "cost_limit_usd": {"type": "number", "minimum": 0}}}]},
            "cache": {"type": "boolean"},
            "skip_defaults": {"type": "boolean"},
            "evaluators": {"type": "array", "items": {"$ref": "#/$defs/assertion"},
                           "deprecated": True, "description": "deprecated alias of `assert`"},
            "workers": {"type": "integer", "minimum": 1,
                        "description": "AgentV: how many tests run at once (suite level; on a test, a stored warning)"},
        },
    }
    test = {
        "type": "object",
        "required": ["input"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": ["string", "integer"]},
            "name": {"type": "string"},
            "description": {"type": "string"},
            "input": {"$ref": "#/$defs/input"},
            "input_files": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                            "description": "AgentV: files sent as file parts before a string `input`"},
            "criteria": {"type": "string"},
            "expected_outcome": {"type": "string", "description": "alias of criteria"},
            "expected_output": {},
            "assert": {"type": "array", "items": {"$ref": "#/$defs/assertion"}},
            "assertions": {"type": "array", "items": {"$ref": "#/$defs/assertion"},
                           "description": "AgentV's name for `assert`"},
            "reference_answer": {"description": "the reference answer judges compare with (AgentV)"},
            "rubrics": {"type": "array", "deprecated": True,
                        "description": "deprecated: use assert: [{type: rubrics, criteria: [...]}]"},
            "execution": execution,
            "skip_defaults": {"type": "boolean"},
            "metadata": {"type": "object"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "category": {"type": "string"},
            "timeout_ms": {"type": "integer", "minimum": 1},
            "target": {"type": "string"},
            "conversation_id": {"type": "string"},
            "note": {"type": "string"},
            "tools": {"type": "array", "items": {"$ref": "#/$defs/tool"}},
            "max_steps": {"type": "integer", "minimum": 1},
        },
    }
    defs["test"] = test
    defs["tool"] = {
        "type": "object",
        "required": ["name"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
            "description": {"type": "string"},
            "parameters": {"type": "object", "description": "JSON Schema of the arguments (type: object)"},
            "result": {"description": "canned result for every call"},
            "results": {"type": "array", "items": {
                "type": "object", "required": ["result"], "additionalProperties": False,
                "properties": {"when": {"type": "object"}, "result": {}}}},
        },
    }
    script = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
    step = {"type": "object", "additionalProperties": False,
            "properties": {"script": script, "timeout_ms": {"type": "integer", "minimum": 1},
                           "environment": {"type": "object", "additionalProperties": {"type": "string"}}}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://eval-pipelines.dev/schemas/eval-suite.schema.json",
        "title": "eval-pipelines eval suite (eval spec v2 YAML)",
        "type": "object",
        "required": ["tests"],
        "additionalProperties": False,
        "dependentRequired": {"name": ["description"], "description": ["name"]},
        "properties": {
            "$schema": {"type": "string"},
            "name": {"type": "string", "pattern": "^[a-z0-9-]+$", "minLength": 1, "maxLength": 64},
            "description": {"type": "string", "minLength": 1, "maxLength": 1024},
            "version": {"type": "string"},
            "author": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "license": {"type": "string"},
            "requires": {"type": "object", "additionalProperties": {"type": "string"}},
            "input": {"$ref": "#/$defs/input"},
            "input_files": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                            "description": "AgentV: files sent as file parts before each test's string `input`"},
            "target": {"type": "string"},
            "judge": {"type": "string", "description": "target that grades model-graded assertions"},
            "execution": execution,
            "workspace": {
                # An object, or (AgentV) the path of a YAML file holding one.
                "type": ["object", "string"],
                "additionalProperties": False,
                "properties": {
                    "template": {"type": "string"},
                    "setup": step,
                    "teardown": step,
                    "dependencies": {"type": "array", "items": {"type": "string"},
                                     "description": "accepted, not installed (a stored warning says so)"},
                    "repos": {"type": "array", "items": {"type": "object"},
                              "description": "git repositories cloned into the workspace (AgentV)"},
                    "hooks": {"type": "object", "description": "AgentV before_all_tests / after_all_tests "
                                                               "(setup / teardown); per-test hooks warn"},
                    "reset": {"description": "AgentV: accepted, not used (a stored warning says so)"},
                    "mode": {"description": "AgentV: accepted, not used (a stored warning says so)"},
                },
            },
            "assert": {"type": "array", "items": {"$ref": "#/$defs/assertion"}},
            "assertions": {"type": "array", "items": {"$ref": "#/$defs/assertion"},
                           "description": "AgentV's name for `assert`"},
            "thresholds": {"type": "object", "additionalProperties": {"type": "number"}},
            "settings": {"type": "object", "additionalProperties": False, "properties": {
                "timeout_ms": {"type": "integer", "minimum": 1},
                "max_concurrency": {"type": "integer", "minimum": 1},
                "fail_fast": {"type": "boolean", "description": "stop after the first failing case"},
                "retry_count": {"type": "integer", "minimum": 0, "description": "HTTP retries of each call"},
                "rerun_failed": {"type": "integer", "minimum": 0, "description": "re-runs of a failing case"},
                "delay_ms": {"type": "integer", "minimum": 0,
                             "description": "pause after each call the cache did not answer"},
                "target_delay_ms": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0},
                                    "description": "delay_ms by target name (wins over delay_ms)"},
            }},
            "baseline": {"type": "string", "description": "version to compare with (1.2.0 or name@1.2.0)"},
            "regression": {"type": "object", "additionalProperties": False, "properties": {
                "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "min_effect": {"type": "number", "minimum": 0, "maximum": 1},
            }},
            "blocking": {"type": "boolean", "description": "a missed gate stops the downstream stages"},
            "tools": {"type": "array", "items": {"$ref": "#/$defs/tool"}},
            "max_steps": {"type": "integer", "minimum": 1},
            "tests": {"anyOf": [
                {"type": "string", "description": "path to a .jsonl, .csv or .yaml dataset"},
                {"type": "array", "items": {"anyOf": [
                    {"$ref": "#/$defs/test"},
                    {"type": "string", "pattern": "^file://", "description": "file:// reference (globs allowed)"},
                ]}},
            ]},
            "evaluator": {"description": "accepted, not used (a stored warning says so)"},
            "dataset": {"description": "accepted, not used (a stored warning says so)"},
        },
        "$defs": defs,
    }
