"""``regex`` (001), ``regex_match`` (000) and harness ``pattern`` (003).

Patterns are compiled when the suite loads, so an invalid one is a load error.
Matching uses the ``regex`` package (Python ``re`` syntax) because it can stop
a search after a time limit: a catastrophically backtracking pattern on a long
output ends as an ``error`` grade instead of hanging the run.
"""

from __future__ import annotations

from typing import Literal

import regex as re

from pydantic import Field, field_validator, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

FLAGS = {"multiline": re.MULTILINE, "ignorecase": re.IGNORECASE, "dotall": re.DOTALL}
MATCH_TIMEOUT_S = 2.0


class RegexParams(Params):
    value: str | list[str] | None = None
    pattern: str | list[str] | None = None
    flags: list[Literal["multiline", "ignorecase", "dotall"]] = []
    must_match: bool = True
    capture_groups: list[str] = []
    timeout_s: float = Field(default=MATCH_TIMEOUT_S, gt=0, le=60)

    @model_validator(mode="after")
    def _one_pattern_field(self) -> "RegexParams":
        if (self.value is None) == (self.pattern is None):
            raise ValueError("give the pattern in exactly one of `value` or `pattern`")
        for pattern in self.patterns:
            try:
                re.compile(pattern, self.flag_bits)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        return self

    @field_validator("value", "pattern")
    @classmethod
    def _not_empty_list(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and not value:
            raise ValueError("must hold at least one pattern")
        return value

    @property
    def patterns(self) -> list[str]:
        raw = self.value if self.value is not None else self.pattern
        return [raw] if isinstance(raw, str) else list(raw or [])

    @property
    def flag_bits(self) -> int:
        bits = 0
        for name in self.flags:
            bits |= FLAGS[name]
        return bits


class Regex(Grader[RegexParams]):
    type = "regex"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("regex_match", "pattern", "matches")
    Params = RegexParams

    def grade(self, params: RegexParams, inp: GradeInput) -> Outcome:
        matched: list[str] = []
        unmatched: list[str] = []
        captures: dict[str, str | None] = {}
        for pattern in params.patterns:
            try:
                match = re.search(pattern, inp.output, params.flag_bits, timeout=params.timeout_s)
            except TimeoutError:
                return Outcome(0.0, f"pattern {pattern!r} took longer than {params.timeout_s:g} s on a "
                                    f"{len(inp.output)}-character output (catastrophic backtracking?)",
                               {"pattern": pattern}, status="error")
            if match is None:
                unmatched.append(pattern)
                continue
            matched.append(pattern)
            for i, name in enumerate(params.capture_groups):
                if name in match.groupdict():
                    captures[name] = match.group(name)
                elif i < len(match.groups()):
                    captures[name] = match.group(i + 1)
        all_match = not unmatched
        ok = all_match if params.must_match else not matched
        if params.must_match:
            reason = "all patterns match" if ok else f"no match for {unmatched!r}"
        else:
            reason = "no forbidden pattern matches" if ok else f"forbidden match for {matched!r}"
        details = {"matched_patterns": matched, "unmatched_patterns": unmatched}
        if captures:
            details["captures"] = captures
        return Outcome.binary(ok, reason, **details)
