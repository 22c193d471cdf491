"""The request a target receives and the output it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from eval_pipelines.run.tracing.spans import OutputTrace
from eval_pipelines.suite.models import DEFAULT_MAX_STEPS, InputFile, Message, ToolSpec


@dataclass(frozen=True)
class TargetRequest:
    test_id: str
    trial: int
    system_prompt: str | None
    messages: list[Message]
    timeout_s: float
    # Tools offered to the model; with any, the target runs the tool-calling loop
    # for at most ``max_steps`` model calls. Targets without tool support ignore them.
    tools: list[ToolSpec] = field(default_factory=list)
    max_steps: int = DEFAULT_MAX_STEPS
    # A JSON Schema the answer must follow (seed 002 `expectedSchema`): OpenAI-compatible
    # targets send it as `response_format`; the others cannot (the loader warns).
    response_schema: dict[str, Any] | None = None
    # Settings the case lays over the target's own (a promptfoo prompt's `config`: temperature,
    # max_tokens, response_format); OpenAI-compatible targets send them, the others cannot.
    model_settings: dict[str, Any] | None = None
    # W3C trace context of this call when the suite is traced (promptfoo `tracing.enabled`):
    # targets record their spans under it. Never part of a cache key.
    traceparent: str | None = None
    # Where a traced script provider exports its spans (tracing.otlp.http): the port of the
    # receiver started in its sandbox, and the body formats it takes.
    otlp_port: int = 4318
    otlp_formats: tuple[str, ...] = ("json", "protobuf")
    # Files of the case (skill-creator's eval `files`): agent targets stage them into the workspace.
    input_files: tuple[InputFile, ...] = ()
    # with_skill or without_skill (suite/models.py): part of the cache key, so a baseline answer is
    # never served for a run with the skill, or the other way round.
    configuration: str = "with_skill"

    @property
    def user_text(self) -> str:
        return "\n\n".join(m.content for m in self.messages if m.role == "user")


@dataclass
class ModelOutput:
    """One attempt at one case on one target: an output or an error, never neither."""

    test_id: str
    target: str
    trial: int
    output: str | None
    error: str | None = None
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    cached: bool = False
    attempts: int = 1
    llm_calls: int = 0
    tool_calls: int = 0
    # Tool-calling runs: one item per tool call, in order:
    # {"tool", "args", "result", "step", "call_id"}; the last may carry "stopped".
    trace: list[dict[str, Any]] = field(default_factory=list)
    # The provider's finish reason of the (last) model call, as it sent it (`stop`, `length`,
    # `content_filter`, `tool_calls`, ...); None when it sent none. promptfoo's finish-reason reads it.
    finish_reason: str | None = None
    # The answer's token log-probabilities (the last model call's), when they were asked for
    # (``logprobs: true``, sent only for cases with a perplexity assertion); None otherwise.
    logprobs: list[float] | None = None
    # A conversation turn's earlier answers its input was filled with, by test id
    # (``TestCase.after``). Not stored: the grades stage finds them among the stored outputs.
    answers: dict[str, str | None] = field(default_factory=dict)
    # The promptfoo registers (storeOutputAs) its input was filled with, by name (suite/registers.py).
    # Not stored either: the grades stage replays the stored outputs (run/registers.py).
    registers: dict[str, Any] = field(default_factory=dict)
    # The call's OpenTelemetry trace (its id and spans) when the suite is traced, else None.
    otel: OutputTrace | None = None
    # Agent targets (run/targets/agent/): the files the agent created or changed in its workspace
    # ({"path", "size", "sha256", "text", "truncated", "binary"}), the transcript (messages and tool
    # calls, each truncated), the run's metrics and the limits it ran under. Empty / None otherwise.
    files: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    run_metrics: dict[str, Any] | None = None
    limits: dict[str, Any] | None = None
    # with_skill or without_skill (suite/models.py): the skill installed or not for this output.
    configuration: str = "with_skill"


class Target(Protocol):
    name: str
    concurrency: int

    async def generate(self, request: TargetRequest) -> ModelOutput: ...

    async def aclose(self) -> None: ...
