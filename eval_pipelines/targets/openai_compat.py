"""Chat completions through ``openai.AsyncOpenAI`` against any compatible base URL.

Retries are ours, not the client's (``max_retries=0``): exponential backoff with
full jitter on 429, 5xx, timeouts, connection errors and unreadable bodies,
honouring ``Retry-After``. A call that still fails returns a ``ModelOutput``
with ``error`` set, so the case is stored as an error row instead of vanishing.
The API key is passed in by the caller (read from the environment through
Dagster's ``EnvVar`` or ``os.environ``) and never written anywhere.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any, Mapping

import openai
from openai.types.chat import ChatCompletion

from eval_pipelines.targets.base import ModelOutput, TargetRequest
from eval_pipelines.targets.config import OpenAITargetConfig

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0


def _retry_after_s(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    raw = headers.get("retry-after-ms")
    if raw:
        try:
            return float(raw) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw:
        try:
            return float(raw)
        except ValueError:
            return None
    return None


def _is_retryable(exc: Exception) -> bool:
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in (408, 409, 429)
    # A 200 whose body is truncated or not JSON: worth another try.
    return isinstance(exc, (openai.APIResponseValidationError, ValueError))


def describe_error(exc: Exception, secret: str | None = None) -> str:
    if isinstance(exc, openai.APIStatusError):
        text = f"HTTP {exc.status_code}: {exc.message}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    if secret:
        text = text.replace(secret, "***")
    return text[:2000]


class OpenAITarget:
    def __init__(
        self,
        config: OpenAITargetConfig,
        *,
        api_key: str | None,
        base_url: str | None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.concurrency = config.concurrency
        self._api_key = api_key
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "no-key",  # local servers accept any key
            base_url=base_url,
            max_retries=0,
            timeout=config.timeout_s,
            http_client=openai.DefaultAioHttpClient(),
        )
        self._rate_lock = asyncio.Lock()
        self._next_slot = 0.0

    async def _respect_rate_limit(self) -> None:
        rpm = self.config.requests_per_minute
        if not rpm:
            return
        async with self._rate_lock:
            now = time.monotonic()
            wait = self._next_slot - now
            self._next_slot = max(now, self._next_slot) + 60.0 / rpm
        if wait > 0:
            await asyncio.sleep(wait)

    def _body(self, request: TargetRequest) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        messages.extend({"role": m.role, "content": m.content} for m in request.messages)
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        return body

    def _cost(self, usage: Any) -> float | None:
        if usage is None:
            return None
        return (
            (usage.prompt_tokens or 0) * self.config.price_input_per_million
            + (usage.completion_tokens or 0) * self.config.price_output_per_million
        ) / 1_000_000

    async def generate(self, request: TargetRequest) -> ModelOutput:
        body = self._body(request)
        started = time.perf_counter()
        last_error = "no attempt made"
        attempts = 0
        for attempt in range(self.config.max_retries + 1):
            attempts = attempt + 1
            await self._respect_rate_limit()
            try:
                completion = await self._client.chat.completions.create(
                    **body, timeout=request.timeout_s
                )
                if not isinstance(completion, ChatCompletion):
                    # A 200 with a non-JSON body comes back from the SDK as plain text.
                    raise ValueError(f"response is not a chat completion: {str(completion)[:200]!r}")
                if not completion.choices:
                    raise ValueError("response has no choices")
                message = completion.choices[0].message
                usage = completion.usage
                return ModelOutput(
                    test_id=request.test_id,
                    target=self.name,
                    trial=request.trial,
                    output=message.content or "",
                    latency_ms=(time.perf_counter() - started) * 1000,
                    prompt_tokens=usage.prompt_tokens if usage else None,
                    completion_tokens=usage.completion_tokens if usage else None,
                    cost_usd=self._cost(usage),
                    attempts=attempts,
                    llm_calls=attempts,
                )
            except Exception as exc:  # noqa: BLE001 - every failure ends as a row
                last_error = describe_error(exc, self._api_key)
                if not _is_retryable(exc) or attempt == self.config.max_retries:
                    break
                delay = _retry_after_s(exc)
                if delay is None:
                    delay = random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt))
                await asyncio.sleep(min(delay, BACKOFF_CAP_S))
        return ModelOutput(
            test_id=request.test_id,
            target=self.name,
            trial=request.trial,
            output=None,
            error=f"{last_error} (after {attempts} attempt(s))",
            latency_ms=(time.perf_counter() - started) * 1000,
            attempts=attempts,
            llm_calls=attempts,
        )

    async def aclose(self) -> None:
        await self._client.close()


def resolve_connection(
    config: OpenAITargetConfig, env: Mapping[str, str | None]
) -> tuple[str | None, str | None]:
    """(api_key, base_url) for a target from the given environment view."""
    base_url = config.base_url or env.get(config.base_url_env) or None
    return env.get(config.api_key_env) or None, base_url
