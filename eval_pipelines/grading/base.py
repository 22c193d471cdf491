"""What a grader receives and returns, and what the registry knows of each grader.

A grader is a small object with a parameter model (validated when the suite is
loaded, so a bad regex or schema is reported before any model is called) and a
``grade`` function that turns one output into an :class:`Outcome`. Graders that
wait on a judge model or a subprocess implement ``agrade`` instead.
``grading.dispatch`` turns an outcome into a stored :class:`Grade` (negation,
pass threshold); nothing else does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ClassVar, Generic, Literal, Mapping, NamedTuple, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict

from eval_pipelines.suite.models import TestCase

if TYPE_CHECKING:
    from eval_pipelines.grading.judge import Judge
    from eval_pipelines.run.tracing.spans import OutputTrace

GradeStatus = Literal["graded", "error", "not_evaluated", "pending_human"]
# Who grades: code (deterministic or executed), a model (judge or embeddings), or people.
GraderFamily = Literal["code", "model", "human"]
OutputKey = tuple[str, str, int]  # (test_id, target, trial)


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
    # The provider's finish reason as it sent it (None: it sent none), for finish_reason.
    finish_reason: str | None = None
    # The answer's token log-probabilities when they were asked for, for perplexity.
    logprobs: tuple[float, ...] | None = None


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
    # Grades a nested assertion (raw mapping, index[, another GradeInput]) with this same
    # input unless one is given; set by grading.dispatch, used by composite graders and
    # ``transformed``, so they need not import dispatch.
    grade_nested: "Callable[..., Awaitable[Grade]] | None" = None
    # The output's OpenTelemetry trace in a traced suite (promptfoo `context.trace`), else None.
    otel: "OutputTrace | None" = None
    # An agent run's output files and transcript (ModelOutput.files / .transcript): `output_file`
    # grades a file's content; model-graded assertions show both to the judge (_judging.agent_evidence).
    files: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Grade:
    """One assertion's verdict on one output: what the ``grades`` table stores."""

    assertion_index: int
    assertion_type: str
    assertion_name: str
    score: float
    passed: bool
    status: GradeStatus
    reason: str
    weight: float
    required: bool | float
    details: dict[str, Any] = field(default_factory=dict)
    # The score on the outer pass scale for a grader with its own threshold (``Outcome.calibrated``),
    # negated with the score; None when the grader has none. ``score`` is what the grader gave.
    calibrated_score: float | None = None


def decided_score(grade: Grade) -> float:
    """The score a grade's verdict is decided on: calibrated when its grader has its own threshold."""
    return grade.score if grade.calibrated_score is None else grade.calibrated_score


def output_hash(text: str) -> str:
    """Identity of an output's text: human ratings attach to it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class GradingContext:
    """What grading may consult besides the output: the baseline run's output of
    the same case (regression comparisons) and ratings people gave (human)."""

    baseline_outputs: Mapping[OutputKey, str] = field(default_factory=dict)
    # (test_id, target, trial, output_hash) -> [{"rater", "rating", "comment"}]
    human_ratings: Mapping[tuple[str, str, int, str], list[dict]] = field(default_factory=dict)
    # The run's workspace folder, for graders that inspect files (agent_judge).
    workspace: Path | None = None

    def baseline_for(self, key: OutputKey) -> str | None:
        test_id, target, _ = key
        return self.baseline_outputs.get(key, self.baseline_outputs.get((test_id, target, 0)))

    def ratings_for(self, key: OutputKey, output: str) -> list[dict]:
        return list(self.human_ratings.get((*key, output_hash(output)), []))


@dataclass(frozen=True)
class Outcome:
    score: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    status: GradeStatus = "graded"
    # A grader that decides the verdict itself (promptfoo's assertScoringFunction returns
    # `pass` and `score` apart); None: passed when the score reaches the pass mark.
    passed: bool | None = None
    # The verdict stands under `not-` as well: promptfoo's script assertions fail when their code
    # throws, inverted or not (its catch returns `pass: false` without looking at `inverse`).
    final: bool = False
    # For a grader judged against its own threshold: ``score`` mapped so that the threshold lands
    # on the outer pass mark 0.8 (``_judging.calibrate``). Verdicts, gates and the case's verdict
    # are decided on it; ``score`` stays the raw score the grader gave (stored in ``grades.score``,
    # averaged by ``mean_score``), this one in ``grades.calibrated_score``.
    calibrated: float | None = None

    @classmethod
    def binary(cls, ok: bool, reason: str, **details: Any) -> "Outcome":
        return cls(1.0 if ok else 0.0, reason, details)


P = TypeVar("P", bound=Params)


class CompareItem(NamedTuple):
    """One output of a group a compare grader sees: its key, its input and its other grades."""

    key: OutputKey
    inp: GradeInput
    grades: list[Grade]


class BatchOutcomes(NamedTuple):
    """Outcomes of many outputs at once, as columns: ``details`` is already the
    JSON text ``json.dumps(details, ensure_ascii=False)`` would give."""

    scores: list[float]
    reasons: list[str]
    details: list[str]


class Grader(Generic[P]):
    """Subclasses set ``type``, ``aliases`` and ``Params`` and implement ``grade``.

    The class attributes below are the grader's metadata: reports (code / model /
    human families), the schema export and the docs index read them from the
    registry, so a new grader is described in one place."""

    type: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    Params: ClassVar[type[Params]]
    # Graded by a model (a judge or an embedding model) unless set otherwise.
    needs_judge: ClassVar[bool] = False
    family: ClassVar[GraderFamily | None] = None  # None: "model" when needs_judge, else "code"
    group: ClassVar[str] = "other"  # the section of docs/assertions.md it is described in
    score_range: ClassVar[str] = "0..1"  # "0 or 1" for pass/fail graders
    # Parameters a suite may write that this grader cannot apply here: name -> why.
    # The loader stores "accepted, not used" warnings for them (suites.warnings, reports).
    unused_params: ClassVar[dict[str, str]] = {}

    @classmethod
    def grader_family(cls) -> GraderFamily:
        return cls.family or ("model" if cls.needs_judge else "code")

    def nested_assertions(self, params: P) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """(path inside the assertion, raw mapping) of each nested assertion, which the
        loader validates like a top-level one; only composite graders have any."""
        return []

    def grade(self, params: P, inp: GradeInput) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError

    # Compare graders (promptfoo's select-best, max-score) grade all outputs of one test together:
    # dispatch skips them output by output and calls ``acompare`` once the whole group is graded,
    # with each output's input and its other grades; one outcome per item, in order.
    compares: ClassVar[bool] = False
    # "test": the outputs of one test across prompts and targets; "output": each output alone,
    # after its other assertions (graded before the "test" ones, as promptfoo does).
    compare_scope: ClassVar[Literal["test", "output"]] = "test"

    async def acompare(self, params: P, items: Sequence["CompareItem"]) -> list[Outcome]:  # pragma: no cover
        raise NotImplementedError

    async def agrade(self, params: P, inp: GradeInput) -> Outcome:
        """Graders that call a model or a subprocess override this; the rest are sync."""
        return self.grade(params, inp)

    # Batch grading (grading.dispatch.grade_batch): graders of plain text that
    # need nothing but the output set ``batchable`` and implement
    # ``grade_batch``, which must give exactly what ``grade`` gives, row by row
    # (tests/grading/test_batch.py compares the two on random inputs).
    batchable: ClassVar[bool] = False

    def can_batch(self, params: P, case: TestCase) -> bool:
        return self.batchable

    def grade_batch(self, params: Sequence[P], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:  # pragma: no cover - abstract
        raise NotImplementedError
