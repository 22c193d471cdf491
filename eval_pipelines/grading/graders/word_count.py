"""``word_count`` (promptfoo ``word-count``): the output's number of words is exact or in a range."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


class WordRange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min: int | None = None
    max: int | None = None

    @model_validator(mode="after")
    def _sensible(self) -> "WordRange":
        if self.min is None and self.max is None:
            raise ValueError("give `min`, `max` or both")
        if any(v is not None and v < 0 for v in (self.min, self.max)):
            raise ValueError("word counts cannot be negative")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class WordCountParams(Params):
    value: int | WordRange

    @field_validator("value", mode="before")
    @classmethod
    def _one_form(cls, value: Any) -> Any:
        # Decide the form here so a bad range gets one message, not one per union member.
        if isinstance(value, dict):
            return WordRange.model_validate(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("expected a number of words or a mapping with `min` and/or `max`")
        if value < 0:
            raise ValueError("a word count cannot be negative")
        return value


class WordCount(Grader[WordCountParams]):
    type = "word_count"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = WordCountParams

    def grade(self, params: WordCountParams, inp: GradeInput) -> Outcome:
        # Words as promptfoo counts them: runs of non-whitespace.
        count = len(inp.output.split())
        if isinstance(params.value, int):
            return Outcome.binary(count == params.value, f"{count} words, expected exactly {params.value}",
                                  words=count)
        low, high = params.value.min, params.value.max
        ok = (low is None or count >= low) and (high is None or count <= high)
        wanted = " and ".join(p for p in (f">= {low}" if low is not None else "",
                                          f"<= {high}" if high is not None else "") if p)
        return Outcome.binary(ok, f"{count} words, expected {wanted}", words=count)
