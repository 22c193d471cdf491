"""What a grader receives and returns.

A grader is a small object with a parameter model (validated when the suite is
loaded, so a bad regex or schema is reported before any model is called) and a
``grade`` function that turns one output into a :class:`Outcome`. Graders that
wait on a judge model or a subprocess implement ``agrade`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, NamedTuple, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict

from eval_pipelines.spec.models import TestCase

if TYPE_CHECKING:
    from eval_pipelines.judge import Judge

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
    llm_calls: int = 0
    tool_calls: int = 0


@dataclass(frozen=True)
class GradeInput:
    case: TestCase
    output: str
    measurements: Measurements = field(default_factory=Measurements)
    trace: list[dict[str, Any]] = field(default_factory=list)
    suite_dir: Path | None = None
    # The model that grades model-graded assertions (None: none configured).
    judge: "Judge | None" = None
    # Files the target produced (agent runs), for agent_judge and code judges.
    workspace: Path | None = None
    # The stored baseline output of the same case, for regression comparisons.
    baseline_output: str | None = None
    # Ratings people gave this output ({"rater", "rating", "comment"}), for `human`.
    human_ratings: list[dict[str, Any]] = field(default_factory=list)


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


class BatchOutcomes(NamedTuple):
    """Outcomes of many outputs at once, as columns: ``details`` is already the
    JSON text ``json.dumps(details, ensure_ascii=False)`` would give."""

    scores: list[float]
    reasons: list[str]
    details: list[str]


class Grader(Generic[P]):
    """Subclasses set ``type``, ``aliases`` and ``Params`` and implement ``grade``."""

    type: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    Params: ClassVar[type[Params]]

    def grade(self, params: P, inp: GradeInput) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError

    async def agrade(self, params: P, inp: GradeInput) -> Outcome:
        """Graders that call a model or a subprocess override this; the rest are sync."""
        return self.grade(params, inp)

    # Batch grading (eval_pipelines/batch_grading.py): graders of plain text that
    # need nothing but the output set ``batchable`` and implement
    # ``grade_batch``, which must give exactly what ``grade`` gives, row by row
    # (tests/test_batch_grading.py compares the two on random inputs).
    batchable: ClassVar[bool] = False

    def can_batch(self, params: P, case: TestCase) -> bool:
        return self.batchable

    def grade_batch(self, params: Sequence[P], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:  # pragma: no cover - abstract
        raise NotImplementedError
