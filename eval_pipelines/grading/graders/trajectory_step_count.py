"""``trajectory_step_count`` (promptfoo's ``trajectory:step-count``, src/assertions/trajectory.ts):
the number of the run's trajectory steps of a ``step_type`` (promptfoo's ``type``) and/or
matching a ``pattern`` lies
within ``min`` .. ``max``.

Steps are the run's recorded tool calls (``_trajectory_steps``): ``tool`` steps and
``command`` steps (shell tools); in a traced run without recorded tool calls, the spans
(``_trajectory_spans``: also ``search``, ``reasoning``, ``message`` and ``span`` steps). ``pattern`` (promptfoo's ``pattern`` or ``name``) is a glob
(``*``, ``?``) over the whole step name, case-insensitive, as promptfoo's ``matchesPattern``.
Without ``step_type`` every step counts. Score 1 when ``min <= count <= max`` (each bound optional, one required), else 0.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders import _trajectory_steps as T
from eval_pipelines.grading.graders._trajectory_spans import steps_of

StepType = Literal["tool", "command", "search", "reasoning", "message", "span"]


class StepCountParams(Params):
    step_type: StepType | list[StepType] | None = None  # promptfoo's value.type
    pattern: str | None = Field(default=None, min_length=1)
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> "StepCountParams":
        if self.min is None and self.max is None:
            raise ValueError("give `min`, `max` or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("`min` is above `max`")
        return self


class TrajectoryStepCount(Grader[StepCountParams]):
    type = "trajectory_step_count"
    group = "agent"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = StepCountParams

    def grade(self, params: StepCountParams, inp: GradeInput) -> Outcome:
        types = [params.step_type] if isinstance(params.step_type, str) else params.step_type
        pattern = params.pattern
        matched = [s for s in steps_of(inp) if T.matches(s, types, pattern)]
        count = len(matched)
        ok = (params.min is None or count >= params.min) and (params.max is None or count <= params.max)
        wanted = (f"{params.min}-{params.max}" if params.min is not None and params.max is not None
                  else f"at least {params.min}" if params.min is not None else f"at most {params.max}")
        filters = ", ".join(([f"type={'|'.join(types)}"] if types else []) + ([f"pattern={pattern}"] if pattern else []))
        reason = (f"Matched {count} trajectory step(s)" + (f" for {filters}" if filters else "")
                  + f" (expected {wanted})"
                  + (f". Matches: {', '.join(f'{s.type}:{s.name}' for s in matched)}" if matched else ""))
        return Outcome.binary(ok, reason, count=count, matches=[f"{s.type}:{s.name}" for s in matched])
