"""What a grader receives and returns.

A grader is a small object with a parameter model (validated when the suite is
loaded, so a bad regex or schema is reported before any model is called) and a
``grade`` function that turns one output into a :class:`Outcome`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from eval_pipelines.spec.models import TestCase

GradeStatus = Literal["graded", "error", "not_evaluated", "pending_human"]


class Params(BaseModel):
    """Base for graders' parameter models: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Measurements:
    """What the run measured for one output; read by latency/cost/token graders."""

    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    llm_calls: int = 1
    tool_calls: int = 0


@dataclass(frozen=True)
class GradeInput:
    case: TestCase
    output: str
    measurements: Measurements = field(default_factory=Measurements)
    trace: list[dict[str, Any]] = field(default_factory=list)
    suite_dir: Path | None = None


@dataclass(frozen=True)
class Outcome:
    score: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    status: GradeStatus = "graded"

    @classmethod
    def binary(cls, ok: bool, reason: str, **details: Any) -> "Outcome":
        return cls(1.0 if ok else 0.0, reason, details)


P = TypeVar("P", bound=Params)


class Grader(Generic[P]):
    """Subclasses set ``type``, ``aliases`` and ``Params`` and implement ``grade``."""

    type: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    Params: ClassVar[type[Params]]

    def grade(self, params: P, inp: GradeInput) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError
