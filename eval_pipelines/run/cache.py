"""The response cache: a model call is paid for once.

The key is a SHA-256 over the target's settings (type, model, resolved base
URL, temperature, max tokens) and the exact request (system prompt, messages,
tools, trial number), never over a secret. Each trial is its own entry, so a
re-run reproduces every trial without a request.

Entries go to DuckDB's ``response_cache`` table in small batches while the
model phase runs (about once a second, with a single non-blocking attempt so
the phase never waits on the write lock), and once more at the end. A run
killed mid-way loses at most the last second of answers; its re-run serves
everything else from the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
import time
from dataclasses import asdict, is_dataclass
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from eval_pipelines.store.connection import DatabaseBusy, db_errors, connect, insert_ignoring_existing, none_if_missing
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import OpenAITargetConfig

_log = logging.getLogger(__name__)

FLUSH_EVERY_S = 1.0
FLUSH_EVERY_N = 50


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if is_dataclass(value):
        return asdict(value)
    return value


def request_hash(config: OpenAITargetConfig, base_url: str | None, request: TargetRequest) -> str:
    key = {
        "target": {"type": config.type, "model": config.model, "base_url": base_url or "",
                   "temperature": config.temperature, "max_tokens": config.max_tokens},
        "system": request.system_prompt,
        "messages": [_plain(m) for m in request.messages],
        "tools": [_plain(t) for t in getattr(request, "tools", None) or []],
        "max_steps": getattr(request, "max_steps", None),
        "response_schema": getattr(request, "response_schema", None),
        "trial": request.trial,
    }
    if getattr(config, "response_format", None) is not None:  # only when set: earlier keys stay valid
        key["target"]["response_format"] = config.response_format
    for field in ("tools", "tool_choice"):  # offered tools change the answer
        if getattr(config, field, None) is not None:
            key["target"][field] = getattr(config, field)
    if getattr(request, "model_settings", None):
        key["model_settings"] = request.model_settings
    configuration = getattr(request, "configuration", "with_skill")
    if configuration != "with_skill":  # only then: the keys of runs stored before stay valid
        key["configuration"] = configuration
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()


class ResponseCache:
    """Reads hits up front, buffers new answers, and flushes them in batches."""

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        self._hits: dict[str, dict[str, Any]] = {}
        self._pending: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        # put() appends on the event loop while flush() runs in a worker thread: the buffer is
        # swapped and restored under this lock, and one flush runs at a time (two at once lost
        # entries: each restored its batch over the other's).
        self._lock = threading.Lock()
        self._flushing = False
        self.hits = 0
        self.stored = 0

    def preload(self, hashes: list[str]) -> None:
        if not hashes:
            return
        with connect(self.db_path) as con:
            rows = con.execute("SELECT * FROM response_cache WHERE request_hash IN (SELECT unnest(CAST(? AS VARCHAR[])))",
                               [hashes]).df()
        self._hits = {r["request_hash"]: r for r in rows.to_dict("records")}

    def get(self, key: str, request: TargetRequest, target: str) -> ModelOutput | None:
        row = self._hits.get(key)
        if row is None:
            return None
        self.hits += 1
        val = none_if_missing

        return ModelOutput(
            test_id=request.test_id, target=target, trial=request.trial, output=row["output"],
            latency_ms=val(row["latency_ms"]),
            prompt_tokens=None if val(row["prompt_tokens"]) is None else int(row["prompt_tokens"]),
            completion_tokens=None if val(row["completion_tokens"]) is None else int(row["completion_tokens"]),
            cost_usd=val(row["cost_usd"]), cached=True, attempts=0,
            llm_calls=int(row["llm_calls"]), tool_calls=int(row["tool_calls"]),
            trace=json.loads(row["trace"]) if row["trace"] else [],
            finish_reason=val(row.get("finish_reason")),
            logprobs=json.loads(row["logprobs"]) if isinstance(val(row.get("logprobs")), str) else None,
        )

    async def put(self, key: str, output: ModelOutput, model: str) -> None:
        if output.error is not None or output.output is None:
            return  # failures are never cached: a re-run tries again
        row = {
            "request_hash": key, "target": output.target, "model": model, "output": output.output,
            "latency_ms": output.latency_ms, "prompt_tokens": output.prompt_tokens,
            "completion_tokens": output.completion_tokens, "cost_usd": output.cost_usd,
            "llm_calls": output.llm_calls, "tool_calls": output.tool_calls,
            "trace": json.dumps(output.trace, default=str),
            "finish_reason": output.finish_reason,
            "logprobs": None if output.logprobs is None else json.dumps(output.logprobs),
            "created_at": datetime.now(timezone.utc).replace(tzinfo=None),
        }
        with self._lock:
            self._pending.append(row)
            due = len(self._pending) >= FLUSH_EVERY_N or time.monotonic() - self._last_flush >= FLUSH_EVERY_S
        if due and not self._flushing:
            self._flushing = True  # set on the event loop: no second flush starts meanwhile
            try:
                await asyncio.to_thread(self.flush, 0.0)
            finally:
                self._flushing = False

    @property
    def unwritten(self) -> int:
        """Entries still buffered (after the last flush: not cached because the file stayed busy)."""
        return len(self._pending)

    def flush(self, wait_s: float = 30.0) -> None:
        """Write buffered entries; with ``wait_s=0`` give up at once if the file is busy."""
        with self._lock:
            batch, self._pending = self._pending, []
            self._last_flush = time.monotonic()
        if not batch:
            return
        # Two targets with the same model and server ask the same request: one key, two answers.
        # DuckDB refuses a key twice in one insert, and its upsert (INSERT OR REPLACE: a delete
        # and an insert) can fail its over-eager key check when another flush wrote the key
        # (a constraint error that lost the whole batch). So each key is written once per batch,
        # and a key already stored keeps its answer: any answer to that request serves a re-run.
        rows = list({row["request_hash"]: row for row in batch}.values())
        try:
            with connect(self.db_path, wait_s=wait_s) as con:
                insert_ignoring_existing(con, "response_cache", pd.DataFrame(rows), "request_hash")
            self.stored += len(rows)
        except DatabaseBusy:
            with self._lock:
                self._pending = batch + self._pending  # try again at the next flush
        except db_errors() as exc:
            # The answers are stored as outputs anyway; a cache that cannot take them must not
            # turn a good answer into a failed call (put() runs inside the target's call).
            _log.warning("%d answers were not added to the response cache: %s", len(rows), exc)


class CachedTarget:
    """Wraps a target: answers from the cache when it can, stores new answers."""

    def __init__(self, target: Any, cache: ResponseCache, config: OpenAITargetConfig, base_url: str | None) -> None:
        self._target = target
        self._cache = cache
        self._config = config
        self._base_url = base_url
        self.name = target.name
        self.concurrency = target.concurrency

    def key(self, request: TargetRequest) -> str:
        return request_hash(self._config, self._base_url, request)

    @property
    def uncached(self) -> Any:
        """The wrapped target: calls that must reach the model (per-test `cache: false`, re-runs)."""
        return self._target

    async def generate(self, request: TargetRequest) -> ModelOutput:
        key = self.key(request)
        hit = self._cache.get(key, request, self.name)
        if hit is not None:
            if getattr(request, "traceparent", None):
                # promptfoo's provider looks its cache up inside the call's GenAI span: a hit
                # still has its span, marked `promptfoo.cache_hit`.
                from eval_pipelines.run.targets.genai_span import genai_span
                from eval_pipelines.run.tracing.spans import OutputTrace, now_ns, parse_traceparent

                at = now_ns()
                body = {"model": self._config.model, "temperature": self._config.temperature,
                        "max_tokens": self._config.max_tokens}
                span = genai_span(request.traceparent, provider_id=self.name, body=body, start_ns=at, end_ns=at,
                                  reply=None, error=hit.error, cache_hit=True)
                hit.otel = OutputTrace(parse_traceparent(request.traceparent)[0], (span,))
            return hit
        output = await self._target.generate(request)
        await self._cache.put(key, output, self._config.model)
        return output

    async def aclose(self) -> None:
        await self._target.aclose()
