"""Chat completions through ``openai.AsyncOpenAI`` against any compatible base URL.

Retries are ours, not the client's (``max_retries=0``): exponential backoff with
full jitter on 429, 5xx, timeouts, connection errors and unreadable bodies,
honouring ``Retry-After``. A call that still fails returns a ``ModelOutput``
with ``error`` set, so the case is stored as an error row instead of vanishing.
The API key is passed in by the caller (read from the environment through
Dagster's ``EnvVar`` or ``os.environ``) and never written anywhere.

Tools: when the request offers tools, ``generate`` runs the tool-calling loop
(see ``_generate_with_tools``): at most ``max_steps`` model calls, each tool
call answered from the test's canned results (``targets/tools.py``) and
recorded in ``trace`` in order.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, replace
from typing import Any, Mapping

import openai

from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import OpenAITargetConfig, resolve_connection  # noqa: F401 - re-exported
from eval_pipelines.run.targets.genai_span import genai_span
from eval_pipelines.run.targets.http_client import aiohttp_client
from eval_pipelines.run.targets.tools import call_tool, openai_tools, parse_arguments, result_content
from eval_pipelines.run.tracing.spans import OutputTrace, Span, now_ns, parse_traceparent

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


@dataclass(frozen=True)
class Reply:
    """What we use of a chat completion: the first choice's message and the usage."""

    content: str | None
    tool_calls: list[dict[str, Any]]
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None = None
    logprobs: list[float] | None = None
    # The body's `model` and `id` (a traced call's span records them).
    model: str | None = None
    id: str | None = None


def _token_logprobs(choice: dict[str, Any]) -> list[float] | None:
    """``choices[0].logprobs.content[].logprob`` (chat completions), None when absent."""
    block = choice.get("logprobs")
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, list):
        return None
    values = [t.get("logprob") for t in content if isinstance(t, dict)]
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)] or None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_reply(data: Any) -> Reply:
    """Read a chat completion body; ``ValueError`` (retried) when it is not one."""
    if not isinstance(data, dict):
        # A 200 whose body is not JSON comes back from the client as text.
        raise ValueError(f"response is not a chat completion: {str(data)[:200]!r}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("response has no choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise ValueError("response's first choice has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"message content is {type(content).__name__}, not text")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ValueError("message tool_calls is not a list")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    finish = choices[0].get("finish_reason")
    return Reply(content, [c for c in calls if isinstance(c, dict)],
                 _int_or_none(usage.get("prompt_tokens")), _int_or_none(usage.get("completion_tokens")),
                 finish if isinstance(finish, str) and finish else None, _token_logprobs(choices[0]),
                 data.get("model") if isinstance(data.get("model"), str) else None,
                 data.get("id") if isinstance(data.get("id"), str) else None)


@dataclass(frozen=True)
class ChatResult:
    reply: Reply | None
    error: str | None
    attempts: int
    latency_ms: float
    span: Span | None = None  # the call's GenAI span, in a traced suite


def response_format(request: TargetRequest) -> dict[str, Any] | None:
    """Structured output: the request's schema (seed 002 ``expectedSchema``) as ``response_format``;
    then the case's own settings (a promptfoo prompt's ``config``), which win over the target's."""
    extra: dict[str, Any] = {}
    if request.response_schema:
        extra["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "expected_output", "schema": request.response_schema}}
    extra.update(getattr(request, "model_settings", None) or {})
    return extra or None


def _otel(request: TargetRequest, spans: list[Span]) -> OutputTrace | None:
    """The output's trace: the request's trace id and the spans of its calls (traced suites only)."""
    parsed = parse_traceparent(request.traceparent) if request.traceparent else None
    return OutputTrace(parsed[0], tuple(spans)) if parsed else None


class OpenAITarget:
    def __init__(
        self,
        config: OpenAITargetConfig,
        *,
        api_key: str | None,
        base_url: str | None,
        withheld_key: str | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.concurrency = config.concurrency
        self._api_key = api_key
        self._withheld_key = withheld_key  # why the key was not sent (key_policy.py): said in failed calls
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "no-key",  # the client wants one; without a key the header is omitted below
            base_url=base_url,
            max_retries=0,
            timeout=config.timeout_s,
            http_client=aiohttp_client(base_url),  # the SDK's aiohttp client, built cheaply (http_client.py)
        )
        # Without a key no Authorization header at all (as promptfoo), never a placeholder bearer.
        self._headers: dict[str, Any] = {} if api_key else {"Authorization": openai.omit}
        self._rate_lock = asyncio.Lock()
        self._next_slot = 0.0

    def _describe(self, exc: Exception) -> str:
        text = describe_error(exc, self._api_key)
        return f"{text} ({self._withheld_key})" if self._withheld_key else text

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

    def _messages(self, request: TargetRequest) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        # A message written as content parts (an image, an audio clip) is sent as the list of parts.
        messages.extend({"role": m.role, "content": m.content if m.parts is None
                         else [p.model_dump(mode="json", exclude_none=True) for p in m.parts]}
                        for m in request.messages)
        return messages

    def cost(self, reply: Reply) -> float | None:
        # No price table: the cost is unknown, not zero (a `cost` gate must not pass silently).
        if (reply.prompt_tokens is None and reply.completion_tokens is None) or (
                self.config.price_input_per_million == 0 and self.config.price_output_per_million == 0):
            return None
        return (
            (reply.prompt_tokens or 0) * self.config.price_input_per_million
            + (reply.completion_tokens or 0) * self.config.price_output_per_million
        ) / 1_000_000

    async def _create(self, body: dict[str, Any], timeout_s: float) -> Reply:
        """``POST /chat/completions`` through the client's own ``post``.

        ``chat.completions.create`` first deep-transforms the arguments against
        the SDK's TypedDicts, and then builds a ``ChatCompletion`` model tree;
        our body is plain JSON we built and we read three fields of the answer.
        Profiling (docs/benchmarks.md) put those two steps at over half of the
        CPU per call. ``post`` keeps the rest of the client: auth, transport,
        timeout, HTTP error mapping and JSON decoding.
        """
        data = await self._client.post(
            "/chat/completions", body=body, cast_to=object,
            options={"timeout": timeout_s, "security": {"bearer_auth": True}, "headers": self._headers})
        return parse_reply(data)

    def _body(self, messages: list[dict[str, Any]], extra: dict[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        if self.config.max_completion_tokens is not None:
            body["max_completion_tokens"] = self.config.max_completion_tokens
        if self.config.response_format is not None:
            body["response_format"] = self.config.response_format
        if self.config.tools is not None and not (extra or {}).get("tools"):  # a test's own tools loop wins
            body["tools"] = self.config.tools
            if self.config.tool_choice is not None:
                body["tool_choice"] = self.config.tool_choice
        body.update(extra or {})
        return body

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        timeout_s: float,
        extra: dict[str, Any] | None = None,
        traceparent: str | None = None,
    ) -> ChatResult:
        """One chat completion with our retry policy; never raises for API failures.

        Each attempt may take the smaller of the target's ``timeout_s``
        (targets.yaml) and the case's timeout. With ``traceparent`` (a traced suite) the
        result carries one GenAI span for the call, its retries included, as promptfoo's
        ``withGenAISpan`` wraps one provider call (run/targets/genai_span.py).
        """
        body = self._body(messages, extra)
        started_ns = now_ns()
        result = await self._chat(body, timeout_s)
        if traceparent:
            result = replace(result, span=genai_span(traceparent, provider_id=self.name, body=body,
                                                     start_ns=started_ns, end_ns=now_ns(),
                                                     reply=result.reply, error=result.error))
        return result

    async def _chat(self, body: dict[str, Any], timeout_s: float) -> ChatResult:
        timeout_s = min(timeout_s, self.config.timeout_s)
        started = time.perf_counter()
        last_error = "no attempt made"
        attempts = 0
        for attempt in range(self.config.max_retries + 1):
            attempts = attempt + 1
            await self._respect_rate_limit()
            try:
                reply = await self._create(body, timeout_s)
                return ChatResult(reply, None, attempts, (time.perf_counter() - started) * 1000)
            except Exception as exc:  # noqa: BLE001 - every failure ends as a row
                last_error = self._describe(exc)
                if not _is_retryable(exc) or attempt == self.config.max_retries:
                    break
                delay = _retry_after_s(exc)
                if delay is None:
                    delay = random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt))
                await asyncio.sleep(min(delay, BACKOFF_CAP_S))
        return ChatResult(None, f"{last_error} (after {attempts} attempt(s))", attempts,
                          (time.perf_counter() - started) * 1000)

    async def generate(self, request: TargetRequest) -> ModelOutput:
        if request.tools:
            return await self._generate_with_tools(request)
        result = await self.chat(self._messages(request), timeout_s=request.timeout_s,
                                 extra=response_format(request), traceparent=request.traceparent)
        reply = result.reply
        otel = _otel(request, [result.span] if result.span else [])
        if reply is None:
            return ModelOutput(
                test_id=request.test_id, target=self.name, trial=request.trial, output=None,
                error=result.error, latency_ms=result.latency_ms,
                # One model call (that failed); its HTTP retries are in `attempts`.
                attempts=result.attempts, llm_calls=1, otel=otel,
            )
        output, trace = offered_tool_output(reply) if self.config.tools is not None else (reply.content or "", [])
        return ModelOutput(
            test_id=request.test_id,
            target=self.name,
            trial=request.trial,
            output=output,
            trace=trace,
            tool_calls=len(trace),
            latency_ms=result.latency_ms,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cost_usd=self.cost(reply),
            attempts=result.attempts,
            llm_calls=1,  # as with tools: model calls, not HTTP attempts
            finish_reason=reply.finish_reason,
            logprobs=reply.logprobs,
            otel=otel,
        )

    async def _generate_with_tools(self, request: TargetRequest) -> ModelOutput:
        """The tool-calling loop.

        Each step is one ``chat`` call (with its own retries). An answer without
        tool calls ends the loop and is the output. Otherwise the assistant
        message and one ``tool`` message per call (the canned result as JSON)
        are appended, and each call becomes a trace item ``{"tool", "args",
        "result", "step", "call_id"}``. After ``max_steps`` model calls that all
        asked for tools, the loop stops without error: the output is the last
        model text (often empty) and the last trace item gets
        ``"stopped": "max_steps"`` (the calls of that last step are answered and
        recorded too, though the model never sees their results). A call that
        still fails after retries ends the loop with ``error`` naming the step;
        the trace so far, tokens and cost are kept.

        ``llm_calls`` counts model calls (steps), ``attempts`` the HTTP attempts
        including retries, ``tool_calls`` the recorded tool calls; tokens and
        cost are summed over every step and latency spans the whole loop.
        """
        tools_by_name = {t.name: t for t in request.tools}
        extra = {"tools": openai_tools(request.tools), **(request.model_settings or {})}
        messages: list[dict[str, Any]] = list(self._messages(request))
        trace: list[dict[str, Any]] = []
        started = time.perf_counter()
        attempts = llm_calls = 0
        prompt_tokens: int | None = None
        completion_tokens: int | None = None
        cost: float | None = None
        text = ""
        finish_reason: str | None = None  # the last model call's
        logprobs: list[float] | None = None  # the last model call's
        spans: list[Span] = []  # one GenAI span per model call, in a traced suite

        def output(out: str | None, error: str | None = None) -> ModelOutput:
            return ModelOutput(
                test_id=request.test_id, target=self.name, trial=request.trial,
                output=out, error=error, latency_ms=(time.perf_counter() - started) * 1000,
                prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost_usd=cost,
                attempts=attempts, llm_calls=llm_calls, tool_calls=len(trace), trace=trace,
                finish_reason=finish_reason, logprobs=logprobs, otel=_otel(request, spans),
            )

        for step in range(1, max(1, request.max_steps) + 1):
            result = await self.chat(messages, timeout_s=request.timeout_s, extra=extra,
                                     traceparent=request.traceparent)
            spans.extend([result.span] if result.span else [])
            attempts += result.attempts
            llm_calls += 1
            reply = result.reply
            if reply is None:
                return output(None, f"step {step} of the tool loop failed: {result.error}")
            if reply.prompt_tokens is not None or reply.completion_tokens is not None:
                prompt_tokens = (prompt_tokens or 0) + (reply.prompt_tokens or 0)
                completion_tokens = (completion_tokens or 0) + (reply.completion_tokens or 0)
                cost = (cost or 0.0) + (self.cost(reply) or 0.0)
            text = reply.content or ""
            finish_reason, logprobs = reply.finish_reason, reply.logprobs
            calls = reply.tool_calls
            if not calls:
                return output(text)
            sent_calls: list[dict[str, Any]] = []
            answers: list[dict[str, Any]] = []
            for index, call in enumerate(calls):
                call_id = call.get("id") or f"call_{step}_{index}"
                function = call.get("function")
                if isinstance(function, dict):
                    name, arguments = str(function.get("name") or ""), function.get("arguments")
                    if arguments is not None and not isinstance(arguments, str):
                        arguments = json.dumps(arguments)
                else:  # a non-function (custom) tool call: answered with an error
                    custom = call.get("custom") if isinstance(call.get("custom"), dict) else {}
                    name = str(custom.get("name") or "")
                    arguments = str(custom.get("input") or "")
                args, value = call_tool(tools_by_name, name, arguments)
                trace.append({"tool": name, "args": args, "result": value, "step": step, "call_id": call_id})
                sent_calls.append({"id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": arguments or ""}})
                answers.append({"role": "tool", "tool_call_id": call_id, "content": result_content(value)})
            messages.append({"role": "assistant", "content": reply.content, "tool_calls": sent_calls})
            messages.extend(answers)
        trace[-1]["stopped"] = "max_steps"
        return output(text)

    async def embed(self, texts: list[str], model: str, *, timeout_s: float) -> list[list[float]]:
        """Embeddings from the same server; raises ``RuntimeError`` after retries."""
        last: Exception | None = None
        for attempt in range(self.config.max_retries + 1):
            try:
                response = await self._client.embeddings.create(model=model, input=texts, timeout=timeout_s,
                                                                 extra_headers=self._headers)
                return [list(item.embedding) for item in sorted(response.data, key=lambda d: d.index)]
            except Exception as exc:  # noqa: BLE001
                last = exc
                if not _is_retryable(exc) or attempt == self.config.max_retries:
                    break
                await asyncio.sleep(_retry_after_s(exc) or random.uniform(0, BACKOFF_BASE_S * 2**attempt))
        raise RuntimeError(f"embeddings failed: {self._describe(last) if last else 'no attempt'}")

    async def aclose(self) -> None:
        await self._client.close()



def offered_tool_output(reply: Reply) -> tuple[str, list[dict[str, Any]]]:
    """The output of a call offered the target's own ``tools`` and the calls as trace items
    (``answered: False``, ``result`` None: nothing answered them). promptfoo's chat provider (src/providers/openai/
    chat.ts): text and calls give the whole message, calls alone the list of calls, else the text."""
    calls = [{"id": c.get("id"), "type": c.get("type", "function"), "function": c.get("function")}
             if isinstance(c.get("function"), dict) else c for c in reply.tool_calls or []]
    if not calls:
        return reply.content or "", []
    trace = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        arguments = function.get("arguments")  # read as answered calls' are (a bad or deep body: `_raw`)
        args = parse_arguments(arguments)[0] if isinstance(arguments, str) else arguments or {}
        trace.append({"tool": str(function.get("name") or ""), "args": args, "result": None, "step": 1,
                      "call_id": call.get("id") or f"call_1_{index}", "answered": False})
    if reply.content:
        return json.dumps({"role": "assistant", "content": reply.content, "tool_calls": calls}), trace
    return json.dumps(calls), trace
