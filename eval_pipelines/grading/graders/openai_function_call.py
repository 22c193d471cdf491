"""``openai_function_call`` (promptfoo's ``is-valid-openai-function-call``): the output is one
OpenAI function call, ``{"name": ..., "arguments": "<JSON text>"}`` (or that object under
``function_call``), naming one of ``functions`` and with arguments valid against its
``parameters`` schema.

As promptfoo's ``validateFunctionCall`` (src/providers/openai/util.ts): ``arguments`` must be
a string holding JSON; a name that no function has fails ("no function with that name"),
also when no functions are given. The promptfoo loader fills ``functions`` from the
provider's ``config.functions``. Scored 1 or 0.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


class FunctionCallParams(Params):
    # The functions the call is checked against: [{name, description?, parameters?}].
    functions: list[dict[str, Any]] = []


def _call(output: str) -> dict[str, Any] | None:
    try:
        value = json.loads(output.strip())
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("function_call"), dict):
        value = value["function_call"]
    if isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("arguments"), str):
        return value
    return None


class OpenAIFunctionCall(Grader[FunctionCallParams]):
    type = "openai_function_call"
    group = "agent"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = FunctionCallParams

    def grade(self, params: FunctionCallParams, inp: GradeInput) -> Outcome:
        from jsonschema.validators import Draft202012Validator, validator_for

        call = _call(inp.output)
        if call is None:
            return Outcome.binary(False, "the output is not a function call {name, arguments (JSON text)}")
        name = call["name"]
        try:
            args = json.loads(call["arguments"])
        except ValueError:
            return Outcome.binary(False, f"{name}: arguments are not JSON")
        function = next((f for f in params.functions if f.get("name") == name), None)
        if function is None or not isinstance(function.get("parameters"), dict):
            return Outcome.binary(False, f"called {name!r}, but there is no function with that name")
        schema = function["parameters"]
        problem = next(iter(validator_for(schema, default=Draft202012Validator)(schema).iter_errors(args)), None)
        if problem is not None:
            return Outcome.binary(False, f"call to {name!r} does not match the schema: {problem.message}")
        return Outcome.binary(True, f"valid call of {name!r}")
