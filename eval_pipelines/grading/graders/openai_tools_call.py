"""``openai_tools_call`` (promptfoo's ``is-valid-openai-tools-call``): the model answered with
tool calls, each naming a tool the test offers and with arguments valid against its parameters.

The calls are read from the run's trace (the tool-calling loop records them, and a target
offering its own ``tools`` records the calls it answered with), else from the output as JSON (a
list of ``{function: {name, arguments}}`` or ``{name, arguments}``). The tools are the test's,
else the providers' ``config.tools`` (promptfoo checks against those). Scored 1 or 0; no tools is
an ``error`` grade.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.contains_json import json_values


class ToolsCallParams(Params):
    # The providers' own OpenAI tool definitions (promptfoo's provider `config.tools`), set by the
    # promptfoo loader; a test's `tools` win.
    tools: list[dict[str, Any]] = []


def _calls(inp: GradeInput) -> list[tuple[str, Any]]:
    calls = [(str(s.get("tool") or s.get("name")), s.get("args", s.get("arguments")))
             for s in inp.trace if s.get("tool") or s.get("name")]
    if calls:
        return calls
    for value in json_values(inp.output)[:1]:
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                body = item.get("function", item)
                if isinstance(body, dict) and "name" in body:
                    calls.append((str(body["name"]), body.get("arguments")))
    return calls


class OpenAIToolsCall(Grader[ToolsCallParams]):
    type = "openai_tools_call"
    group = "agent"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = ToolsCallParams

    def grade(self, params: ToolsCallParams, inp: GradeInput) -> Outcome:
        from jsonschema.validators import Draft202012Validator, validator_for

        tools = {t.name: t.parameters for t in inp.case.tools} or {
            str(body.get("name")): body.get("parameters") or {"type": "object"}
            for t in params.tools if isinstance(body := t.get("function", t), dict)}
        if not tools:
            return Outcome(0.0, "the test offers no tools to check the calls against", status="error")
        calls = _calls(inp)
        if not calls:
            return Outcome.binary(False, "no tool call in the answer")
        for name, args in calls:
            if name not in tools:
                return Outcome.binary(False, f"call of unknown tool {name!r}", calls=len(calls))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    return Outcome.binary(False, f"{name}: arguments are not JSON", calls=len(calls))
            schema = tools[name]
            problem = next(iter(validator_for(schema, default=Draft202012Validator)(schema).iter_errors(args)), None)
            if problem is not None:
                return Outcome.binary(False, f"{name}: {problem.message}", calls=len(calls))
        return Outcome.binary(True, f"{len(calls)} valid tool call(s)", calls=len(calls))
