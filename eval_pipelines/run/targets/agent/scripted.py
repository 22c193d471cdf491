"""A deterministic stand-in for the agent's model: each case's turns, read from a YAML script.

For offline demos and a skill's CI without a model (agent target ``script:``). Only the model is
replaced: the tools, the per-case workspace, the sandbox, the recording and the grading are the
real ones, so a script shows what a skill's evaluation stores before anyone pays for a model.

    # agent-script.yaml
    cases:
      "*":                      # every case without its own entry
        - tool: read_file
          args: {path: skills/report-builder/SKILL.md}
        - tool: run_command
          args: {command: "python3 skills/report-builder/scripts/build.py {input_files}"}
        - answer: "Wrote out/report.json."
      "2":                      # an eval id
        - answer: "..."

``triggers:`` holds the turns of the trigger set's queries the same way, keyed by the query's 1-based
number (or ``"*"``): a query whose turns read the skill's SKILL.md loads the skill.

A step is ``{tool, args}`` (one tool call) or ``{answer}`` (the final text, which ends the run).
In ``args`` and ``answer``, ``{test_id}`` and ``{input_files}`` (the case's input files, space
separated) are replaced. A script that ends without an ``answer`` answers with the last tool
result. Invalid scripts are refused when the target is built, in one line naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval_pipelines.suite.errors import SpecErrors, pydantic_errors
from eval_pipelines.suite.source import load_document


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    answer: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> "Step":
        if (self.tool is None) == (self.answer is None):
            raise ValueError("a step is either {tool, args} or {answer}")
        return self


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cases: dict[str, list[Step]] = Field(min_length=1)
    # Trigger runs (pipeline/triggers.py): the turns per query of the trigger set, keyed by its
    # 1-based number or "*"; a query without turns answers at once (the skill is not loaded).
    triggers: dict[str, list[Step]] = Field(default_factory=dict)

    def steps_for(self, test_id: str) -> list[Step]:
        return self.cases.get(test_id) or self.cases.get("*") or []

    def trigger_steps(self, query_number: int) -> list[Step]:
        return self.triggers.get(str(query_number)) or self.triggers.get("*") or [Step(answer="(no skill needed)")]


def load_script(path: Path) -> Script:
    doc = load_document(path)
    try:
        return Script.model_validate(doc.data)
    except ValidationError as exc:
        raise SpecErrors(pydantic_errors(doc, (), exc)) from None


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, text in names.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    return value


def scripted_model(script: Script, test_id: str, input_files: list[str], steps: list[Step] | None = None) -> Any:
    """Pydantic AI's ``FunctionModel`` answering one case's turns (or the ``steps`` given) in order."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    steps = script.steps_for(test_id) if steps is None else steps
    names = {"test_id": test_id, "input_files": " ".join(input_files)}

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        done = sum(isinstance(m, ModelResponse) for m in messages)
        if done < len(steps):
            step = steps[done]
            if step.answer is not None:
                return ModelResponse(parts=[TextPart(_fill(step.answer, names))])
            return ModelResponse(parts=[ToolCallPart(step.tool, _fill(step.args, names),
                                                     tool_call_id=f"scripted-{done + 1}")])
        # The script ran out without an answer: the last tool result is the answer.
        results = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        return ModelResponse(parts=[TextPart(str(results[-1].content) if results else "")])

    return FunctionModel(respond, model_name="scripted")
