"""How a package's trigger set is run: the ``triggers:`` block of its ``eval-pipelines.yaml``.

The trigger set files (``triggers.py``) hold only queries and ``should_trigger``; what the run
needs beyond them lives in the package's own settings file beside ``SKILL.md`` (ours, not
skill-creator's), every key optional::

    # eval-pipelines.yaml
    triggers:
      runs: 3              # runs per query (skill-creator's run_eval.py: 3)
      threshold: 0.5       # a query triggers when its trigger rate reaches this (run_eval.py: 0.5)
      max_turns: 3         # model turns per run: the skill decision comes first, the rest is not needed
      target: default      # the agent target that answers (default: the suite's first agent target)
      project_skills: true # offer the project's other skills (skills/*/*/SKILL.md) as well
      distractors:         # more skills offered, by name and description only
        - {name: pdf-forms, description: Fills in PDF forms.}
      min_accuracy: 0.8    # the `skill_triggers` check fails below these (none: not checked)
      min_precision: null
      min_recall: null
      file: evals/my-triggers.json   # a trigger set elsewhere in the package (default: looked up)

An unknown key is refused in one line with its "did you mean"; so is a value out of range.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval_pipelines.suite.errors import SpecErrors, pydantic_errors
from eval_pipelines.suite.source import load_document

SETTINGS_FILE = "eval-pipelines.yaml"
SETTINGS_KEY = "triggers"


class Distractor(BaseModel):
    """A skill offered beside the one under test: the agent sees its name and description only."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    description: str = Field(min_length=1)


class TriggerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    runs: int = Field(default=3, ge=1, le=100)
    threshold: float = Field(default=0.5, gt=0, le=1)
    max_turns: int = Field(default=3, ge=1, le=50)
    target: str | None = None
    project_skills: bool = True
    distractors: list[Distractor] = Field(default_factory=list)
    min_accuracy: float | None = Field(default=0.8, ge=0, le=1)
    min_precision: float | None = Field(default=None, ge=0, le=1)
    min_recall: float | None = Field(default=None, ge=0, le=1)
    file: str | None = None

    def thresholds(self) -> dict[str, float]:
        """The minimums the check applies: metric name -> minimum."""
        named = {"accuracy": self.min_accuracy, "precision": self.min_precision, "recall": self.min_recall}
        return {name: value for name, value in named.items() if value is not None}


def load_trigger_settings(skill_root: Path) -> TriggerSettings:
    """The ``triggers:`` block of ``skill_root/eval-pipelines.yaml`` (the defaults without one)."""
    file = skill_root / SETTINGS_FILE
    if not file.is_file():
        return TriggerSettings()
    doc = load_document(file)
    raw = doc.data.get(SETTINGS_KEY) if isinstance(doc.data, dict) else None
    if raw is None:
        return TriggerSettings()
    if not isinstance(raw, dict):
        raise SpecErrors.single(file, f"`{SETTINGS_KEY}` is {type(raw).__name__}", (SETTINGS_KEY,),
                                line=doc.line_of((SETTINGS_KEY,)),
                                expected="a mapping such as `runs: 3`")
    try:
        return TriggerSettings.model_validate(raw)
    except ValidationError as exc:
        raise SpecErrors(pydantic_errors(doc, (SETTINGS_KEY,), exc, list(TriggerSettings.model_fields))) from None
