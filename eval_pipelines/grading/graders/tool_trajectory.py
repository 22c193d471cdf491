"""``tool_trajectory`` (seed 001, read as AgentV v2 reads it): did the agent call the expected tools?

Modes (AgentV's ``tool-trajectory.ts``):

- ``in_order``: the expected calls appear in this order, other calls may come
  between; a call of the right tool with the wrong arguments is a miss.
- ``exact``: the same calls in the same order and nothing else.
- ``any_order``: with ``minimums`` (``{tool: count}``), each tool is called at
  least that often (score = tools meeting their minimum / tools listed); with
  ``expected``, each expected call appears somewhere (each actual call used once).
- ``superset``: every expected call appears (extra calls allowed);
  ``subset``: every actual call is one of the expected calls (nothing else allowed).

Arguments (``args_match``, per item or for the whole assertion):
``superset`` (the default: the given keys are present with equal values),
``exact`` (equal),
``subset`` (the call's keys are all expected with equal values), ``ignore``,
or a list of dotted field paths (only those are compared). ``args: any``
checks the name only. ``max_duration_ms`` on an item adds one aspect: the
matched call's ``duration_ms`` must not exceed it (missing timing: skipped,
neutral, noted in details). ``output`` on an item: the call's result must
contain it (AgentV's static-trace examples check tool results this way).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

ArgsMode = Literal["superset", "subset", "exact", "ignore"] | list[str]


class ExpectedCall(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    tool: str = Field(min_length=1)
    # A mapping of arguments, or `any` (AgentV): the name alone is checked.
    args: dict[str, Any] | Literal["any"] | None = None
    args_match: ArgsMode | None = None
    max_duration_ms: float | None = Field(default=None, gt=0)
    # AgentV: what the tool returned must contain this (mappings: these keys, recursively;
    # lists: each listed item matches some returned item; anything else: equal).
    output: Any = None


class ToolTrajectoryParams(Params):
    mode: Literal["in_order", "any_order", "exact", "superset", "subset"] = "in_order"
    expected: list[ExpectedCall] = []
    minimums: dict[str, int] = {}
    args_match: ArgsMode = "superset"

    @field_validator("minimums")
    @classmethod
    def _positive(cls, value: dict[str, int]) -> dict[str, int]:
        bad = sorted(k for k, v in value.items() if v < 0)
        if bad:
            raise ValueError(f"minimums must be counts of 0 or more (check {bad})")
        return value

    @model_validator(mode="after")
    def _something_to_check(self) -> "ToolTrajectoryParams":
        if self.minimums and self.mode != "any_order":
            raise ValueError("`minimums` belongs to mode any_order")
        if not self.expected and not self.minimums:
            raise ValueError("list at least one expected tool call (`expected`), "
                             "or `minimums` with mode any_order")
        if self.expected and self.minimums:
            raise ValueError("give `expected` or `minimums`, not both")
        return self


class Call(BaseModel):
    name: str
    args: dict[str, Any]
    duration_ms: float | None = None
    result: Any = None


def contains(got: Any, want: Any) -> bool:
    """``want`` is found in ``got``: mappings by key (recursively), lists item by item, else equal."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and contains(got[k], v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and all(any(contains(g, w) for g in got) for w in want)
    return got == want


def actual_calls(trace: list[dict[str, Any]]) -> list[Call]:
    """The calls of a trace; accepts ``tool``/``name``, ``args``/``arguments``/``input`` and ``duration_ms``."""
    calls = []
    for step in trace:
        name = step.get("tool") or step.get("name")
        if not name:
            continue
        args = step.get("args", step.get("arguments", step.get("input"))) or {}
        duration = step.get("duration_ms", step.get("durationMs"))
        calls.append(Call(name=str(name), args=args if isinstance(args, dict) else {"value": args},
                          duration_ms=duration if isinstance(duration, (int, float)) else None,
                          result=step.get("result", step.get("output"))))
    return calls


def _get(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return _MISSING
        data = data[part]
    return data


_MISSING = object()


def args_match(expected: ExpectedCall, call: Call, default: Any) -> bool:
    if expected.args is None or expected.args == "any":
        return True
    mode = expected.args_match if expected.args_match is not None else default
    want, got = expected.args, call.args
    if mode == "ignore":
        return True
    if isinstance(mode, list):
        return all(_get(want, f) is _MISSING or _get(want, f) == _get(got, f) for f in mode)
    if mode == "exact":
        return got == want
    if mode == "subset":
        return all(k in want and want[k] == v for k, v in got.items())
    return all(k in got and got[k] == v for k, v in want.items())  # superset


def _matches(expected: ExpectedCall, call: Call, default: Any) -> bool:
    return call.name == expected.tool and args_match(expected, call, default) and (
        expected.output is None or contains(call.result, expected.output))


class _Tally:
    """Hits and misses over the aspects of one grade (sequence items, then latency checks)."""

    def __init__(self) -> None:
        self.hits = 0
        self.aspects = 0
        self.misses: list[str] = []
        self.skipped: list[str] = []
        self.missing: list[str] = []  # tools of the expected items not matched

    def aspect(self, ok: bool, miss: str, tool: str | None = None) -> None:
        self.aspects += 1
        self.hits += ok
        if not ok:
            self.misses.append(miss)
            if tool is not None:
                self.missing.append(tool)

    def latency(self, want: ExpectedCall, call: Call) -> None:
        if want.max_duration_ms is None:
            return
        if call.duration_ms is None:
            self.skipped.append(f"no duration for {want.tool}; latency check skipped")
            return
        self.aspect(call.duration_ms <= want.max_duration_ms,
                    f"{want.tool} took {call.duration_ms:g} ms (max {want.max_duration_ms:g} ms)")

    def score(self) -> float:
        return self.hits / self.aspects if self.aspects else 1.0


def _in_order(params: ToolTrajectoryParams, calls: list[Call], tally: _Tally) -> None:
    position = 0
    for i, want in enumerate(params.expected):
        found = None
        while position < len(calls):
            call = calls[position]
            position += 1
            if call.name == want.tool:
                found = call if _matches(want, call, params.args_match) else False
                break
        tally.aspect(bool(found), f"expected {want.tool} at position {i}: "
                     + ("arguments differ" if found is False else "not found in the remaining calls"), want.tool)
        if found:
            tally.latency(want, found)


def _exact(params: ToolTrajectoryParams, calls: list[Call], tally: _Tally) -> None:
    if len(calls) != len(params.expected):
        tally.misses.append(f"{len(calls)} calls made, {len(params.expected)} expected")
    for i, want in enumerate(params.expected):
        call = calls[i] if i < len(calls) else None
        ok = call is not None and _matches(want, call, params.args_match)
        tally.aspect(ok, f"position {i}: expected {want.tool}, got {call.name if call else 'nothing'}", want.tool)
        if ok and call is not None:
            tally.latency(want, call)


def _unordered(params: ToolTrajectoryParams, calls: list[Call], tally: _Tally) -> None:
    used: set[int] = set()
    for want in params.expected:
        j = next((j for j, c in enumerate(calls) if j not in used and _matches(want, c, params.args_match)), None)
        tally.aspect(j is not None, f"expected {want.tool}: not found", want.tool)
        if j is not None:
            used.add(j)
            tally.latency(want, calls[j])


def _subset(params: ToolTrajectoryParams, calls: list[Call], tally: _Tally) -> None:
    for call in calls:
        ok = any(_matches(want, call, params.args_match) for want in params.expected)
        tally.aspect(ok, f"unexpected call {call.name}")


def _minimums(params: ToolTrajectoryParams, calls: list[Call], tally: _Tally) -> None:
    for tool, minimum in params.minimums.items():
        count = sum(1 for c in calls if c.name == tool)
        tally.aspect(count >= minimum, f"{tool}: called {count} times (at least {minimum} required)", tool)


class ToolTrajectory(Grader[ToolTrajectoryParams]):
    type = "tool_trajectory"
    group = "agent"  # section of docs/assertions.md
    score_range = "0..1"
    aliases = ("trajectory",)
    Params = ToolTrajectoryParams

    def grade(self, params: ToolTrajectoryParams, inp: GradeInput) -> Outcome:
        calls = actual_calls(inp.trace)
        tally = _Tally()
        if params.minimums:
            _minimums(params, calls, tally)
        elif params.mode == "in_order":
            _in_order(params, calls, tally)
        elif params.mode == "exact":
            _exact(params, calls, tally)
        elif params.mode == "subset":
            _subset(params, calls, tally)
        else:  # any_order with `expected`, superset
            _unordered(params, calls, tally)
        score = tally.score()
        if params.mode == "exact" and len(calls) != len(params.expected):
            score = min(score, len(params.expected) / max(len(calls), 1)) if calls else 0.0
        reason = f"{tally.hits}/{tally.aspects} checks passed ({params.mode})"
        if tally.misses:
            reason += "; " + "; ".join(tally.misses[:5])
        return Outcome(score, reason, {"actual": [c.name for c in calls],
                                       "expected": [e.tool for e in params.expected],
                                       "minimums": params.minimums, "missing": tally.missing, "misses": tally.misses,
                                       "skipped": tally.skipped, "mode": params.mode})
