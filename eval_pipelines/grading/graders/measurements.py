"""Threshold assertions on what the run measured: ``latency``, ``cost``,
``token_usage`` and ``execution_metrics`` (seed 001; AgentV spellings
``threshold`` and ``budget`` accepted). A measurement the target did not report
makes the assertion ``not_evaluated`` rather than a silent pass."""

from __future__ import annotations

from pydantic import AliasChoices, Field, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


def _not_measured(what: str) -> Outcome:
    return Outcome(0.0, f"{what} was not measured for this output", status="not_evaluated")


class LatencyParams(Params):
    max_ms: float = Field(gt=0, validation_alias=AliasChoices("max_ms", "threshold"))


class Latency(Grader[LatencyParams]):
    type = "latency"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = LatencyParams

    def grade(self, params: LatencyParams, inp: GradeInput) -> Outcome:
        value = inp.measurements.latency_ms
        if value is None:
            return _not_measured("latency")
        ok = value <= params.max_ms
        return Outcome.binary(ok, f"latency {value:.0f} ms {'<=' if ok else '>'} {params.max_ms:g} ms",
                              latency_ms=value, max_ms=params.max_ms)


class CostParams(Params):
    max_usd: float = Field(ge=0, validation_alias=AliasChoices("max_usd", "budget"))


class Cost(Grader[CostParams]):
    type = "cost"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = CostParams

    def grade(self, params: CostParams, inp: GradeInput) -> Outcome:
        value = inp.measurements.cost_usd
        if value is None:
            return _not_measured("cost")
        ok = value <= params.max_usd
        return Outcome.binary(ok, f"cost ${value:.6f} {'<=' if ok else '>'} ${params.max_usd:g}",
                              cost_usd=value, max_usd=params.max_usd)


class TokenUsageParams(Params):
    max_total: int | None = Field(default=None, ge=0)
    max_input: int | None = Field(default=None, ge=0)
    max_output: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_limit(self) -> "TokenUsageParams":
        if self.max_total is None and self.max_input is None and self.max_output is None:
            raise ValueError("give at least one of max_total, max_input, max_output")
        return self


class TokenUsage(Grader[TokenUsageParams]):
    type = "token_usage"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("tokens",)
    Params = TokenUsageParams

    def grade(self, params: TokenUsageParams, inp: GradeInput) -> Outcome:
        m = inp.measurements
        if m.prompt_tokens is None and m.completion_tokens is None:
            return _not_measured("token usage")
        used = {"input": m.prompt_tokens or 0, "output": m.completion_tokens or 0}
        used["total"] = used["input"] + used["output"]
        limits = {"total": params.max_total, "input": params.max_input, "output": params.max_output}
        over = [f"{k} {used[k]} > {v}" for k, v in limits.items() if v is not None and used[k] > v]
        return Outcome.binary(not over, "; ".join(over) or "within token limits",
                              used=used, limits={k: v for k, v in limits.items() if v is not None})


class ExecutionMetricsParams(Params):
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_llm_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_duration_ms: float | None = Field(default=None, gt=0)
    # AgentV: the share of tool calls that only look (read, search, list) should be near this.
    target_exploration_ratio: float | None = Field(default=None, ge=0, le=1)
    exploration_tolerance: float = Field(default=0.2, ge=0, le=1)
    exploration_tools: list[str] = Field(default_factory=lambda: list(EXPLORATION_TOOLS))

    @model_validator(mode="after")
    def _one_limit(self) -> "ExecutionMetricsParams":
        if all(getattr(self, k) is None for k in LIMITS) and self.target_exploration_ratio is None:
            raise ValueError("give at least one max_* limit or target_exploration_ratio")
        return self


LIMITS = ("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms")
# Tool names (case-insensitive, `_`/`-` ignored) counted as exploration: they read, they do not change.
EXPLORATION_TOOLS = ("read", "readfile", "grep", "glob", "ls", "list", "listfiles", "listdir", "search",
                     "find", "view", "cat", "fetch", "websearch", "fetchpage")


def _exploration_share(trace: list[dict], tools: list[str]) -> float | None:
    names = [str(s.get("tool") or s.get("name")) for s in trace if s.get("tool") or s.get("name")]
    if not names:
        return None
    wanted = {t.lower().replace("_", "").replace("-", "") for t in tools}
    return sum(1 for n in names if n.lower().replace("_", "").replace("-", "") in wanted) / len(names)


class ExecutionMetrics(Grader[ExecutionMetricsParams]):
    """Score = share of the given limits that hold (each limit is one check)."""

    type = "execution_metrics"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0..1"
    Params = ExecutionMetricsParams

    def grade(self, params: ExecutionMetricsParams, inp: GradeInput) -> Outcome:
        m = inp.measurements
        tokens = None if m.prompt_tokens is None and m.completion_tokens is None else (
            (m.prompt_tokens or 0) + (m.completion_tokens or 0))
        measured = {
            "max_tool_calls": m.tool_calls, "max_llm_calls": m.llm_calls, "max_tokens": tokens,
            "max_cost_usd": m.cost_usd, "max_duration_ms": m.latency_ms,
        }
        checks, failures, unmeasured = 0, [], []
        if params.target_exploration_ratio is not None:
            share = _exploration_share(inp.trace, params.exploration_tools)
            measured["exploration_ratio"] = share
            if share is None:
                unmeasured.append("exploration_ratio")
            else:
                checks += 1
                if abs(share - params.target_exploration_ratio) > params.exploration_tolerance:
                    failures.append(f"exploration ratio {share:.2f} not within {params.exploration_tolerance:g} "
                                    f"of {params.target_exploration_ratio:g}")
        for name in LIMITS:
            limit = getattr(params, name)
            if limit is None:
                continue
            value = measured[name]
            if value is None:
                unmeasured.append(name)
                continue
            checks += 1
            if value > limit:
                failures.append(f"{name.removeprefix('max_')} {value:g} > {limit:g}")
        if checks == 0:
            return _not_measured(", ".join(n.removeprefix("max_") for n in unmeasured))
        score = (checks - len(failures)) / checks
        return Outcome(score, "; ".join(failures) or "within every limit",
                       {"measured": {k.removeprefix("max_"): v for k, v in measured.items()},
                        "failures": failures, "not_measured": unmeasured})
