"""The judge: the model behind model-graded assertions (``llm_judge``, ``rubrics``, ...).

It goes through the same OpenAI-compatible client and retry policy as targets,
asks for JSON (``response_format: json_object``, dropped when a server refuses
it), validates the reply, and re-asks when the reply is not a JSON object, so a
chatty judge costs a retry instead of a wrong grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from eval_pipelines.grading.graders.text import parse_json_output
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.run.targets.openai_compat import OpenAITarget

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"


class JudgeError(RuntimeError):
    """The judge could not produce a usable answer (after retries)."""


@dataclass(frozen=True)
class JudgeReply:
    data: dict[str, Any]
    raw: str
    attempts: int
    latency_ms: float
    cost_usd: float | None


class Judge(Protocol):
    model: str

    async def complete_json(
        self, system: str, user: str, *, temperature: float | None = None, max_attempts: int = 3
    ) -> JudgeReply: ...

    async def embed(self, texts: list[str], model: str | None = None) -> list[list[float]]: ...


class OpenAIJudge:
    def __init__(
        self,
        config: OpenAITargetConfig,
        *,
        api_key: str | None,
        base_url: str | None,
        embedding_model: str | None = None,
        withheld_key: str | None = None,
    ) -> None:
        self.model = config.model
        self.timeout_s = config.timeout_s
        # The caller's choice, else the target's own (targets.yaml `embedding_model`), else ours.
        self.embedding_model = embedding_model or config.embedding_model or DEFAULT_EMBEDDING_MODEL
        # A server to embed with: a base URL, or a key for the provider's default one.
        # Without either, semantic_sim embeds with the local model instead.
        self.embeddings_configured = bool(api_key or base_url or config.base_url)
        self._target = OpenAITarget(config, api_key=api_key, base_url=base_url, withheld_key=withheld_key)
        self._json_mode = True

    async def complete_json(
        self, system: str, user: str, *, temperature: float | None = None, max_attempts: int = 3
    ) -> JudgeReply:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        total_attempts, latency, cost = 0, 0.0, 0.0
        text = ""
        for _ in range(max_attempts):
            extra: dict[str, Any] = {}
            if self._json_mode:
                extra["response_format"] = {"type": "json_object"}
            if temperature is not None:
                extra["temperature"] = temperature
            result = await self._target.chat(messages, timeout_s=self.timeout_s, extra=extra)
            total_attempts += result.attempts
            latency += result.latency_ms
            if result.reply is None:
                error = result.error or "unknown error"
                if self._json_mode and "HTTP 400" in error and "response_format" in error.lower():
                    self._json_mode = False  # this server has no JSON mode; ask in words
                    continue
                raise JudgeError(f"judge call failed: {error}")
            cost += self._target.cost(result.reply) or 0.0
            text = result.reply.content or ""
            try:
                data = parse_json_output(text, allow_fence=True)
                if not isinstance(data, dict):
                    raise ValueError(f"expected a JSON object, got {type(data).__name__}")
            except ValueError as exc:
                messages += [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": f"That reply was not a JSON object ({exc}). "
                                                "Answer again with only the JSON object."},
                ]
                continue
            return JudgeReply(data, text, total_attempts, latency, cost)
        raise JudgeError(f"judge returned no valid JSON object after {max_attempts} replies; "
                         f"last reply: {text[:300]!r}")

    async def embed(self, texts: list[str], model: str | None = None) -> list[list[float]]:
        return await self._target.embed(texts, model or self.embedding_model, timeout_s=self.timeout_s)

    async def aclose(self) -> None:
        await self._target.aclose()
