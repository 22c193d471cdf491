"""``tool_trajectory`` (seed 001): did the agent call the expected tools?

Modes: ``in_order`` (expected calls appear in this order, others may come
between), ``any_order`` (each expected call appears, order free), ``exact``
(the same calls, in order, nothing else). The score is the share of expected
calls matched; ``exact`` is 1 only for an exact match, else the share of
positions that agree. Arguments, when given, must match: ``subset`` (the
expected keys with equal values, the default) or ``exact``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


class ExpectedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    args: dict[str, Any] | None = None


class ToolTrajectoryParams(Params):
    mode: Literal["in_order", "any_order", "exact"] = "in_order"
    expected: list[ExpectedCall]
    args_match: Literal["subset", "exact", "ignore"] = "subset"

    @field_validator("expected")
    @classmethod
    def _not_empty(cls, value: list[ExpectedCall]) -> list[ExpectedCall]:
        if not value:
            raise ValueError("list at least one expected tool call")
        return value


def actual_calls(trace: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(tool, args) of each call in a trace; accepts ``tool``/``name`` and ``args``/``arguments``."""
    calls = []
    for step in trace:
        name = step.get("tool") or step.get("name")
        if not name:
            continue
        args = step.get("args", step.get("arguments")) or {}
        calls.append((str(name), args if isinstance(args, dict) else {"value": args}))
    return calls


def _matches(expected: ExpectedCall, call: tuple[str, dict[str, Any]], args_match: str) -> bool:
    name, args = call
    if name != expected.tool:
        return False
    if expected.args is None or args_match == "ignore":
        return True
    if args_match == "exact":
        return args == expected.args
    return all(k in args and args[k] == v for k, v in expected.args.items())


class ToolTrajectory(Grader[ToolTrajectoryParams]):
    type = "tool_trajectory"
    group = "agent"  # section of docs/assertions.md
    score_range = "0..1"
    aliases = ("trajectory",)
    Params = ToolTrajectoryParams

    def grade(self, params: ToolTrajectoryParams, inp: GradeInput) -> Outcome:
        calls = actual_calls(inp.trace)
        expected = params.expected
        matched: list[int] = []  # indexes of expected calls that were found
        if params.mode == "in_order":
            position = 0
            for i, want in enumerate(expected):
                for j in range(position, len(calls)):
                    if _matches(want, calls[j], params.args_match):
                        matched.append(i)
                        position = j + 1
                        break
            score = len(matched) / len(expected)
        elif params.mode == "any_order":
            used: set[int] = set()
            for i, want in enumerate(expected):
                j = next((j for j, c in enumerate(calls)
                          if j not in used and _matches(want, c, params.args_match)), None)
                if j is not None:
                    used.add(j)
                    matched.append(i)
            score = len(matched) / len(expected)
        else:
            matched = [i for i, (want, call) in enumerate(zip(expected, calls))
                       if _matches(want, call, params.args_match)]
            exact = len(calls) == len(expected) and len(matched) == len(expected)
            score = 1.0 if exact else len(matched) / max(len(expected), len(calls))
        missing = [expected[i].tool for i in range(len(expected)) if i not in matched]
        reason = (f"{len(matched)}/{len(expected)} expected calls matched ({params.mode})"
                  + (f"; missing {missing}" if missing else ""))
        if params.mode == "exact" and len(calls) != len(expected):
            reason += f"; {len(calls)} calls made, {len(expected)} expected"
        return Outcome(score, reason, {"actual": [c[0] for c in calls], "expected": [e.tool for e in expected],
                                       "missing": missing, "mode": params.mode})
