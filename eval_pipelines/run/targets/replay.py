"""Replay: grade outputs that were recorded earlier instead of calling a model.

A recording is JSONL (one object per line) or CSV with the columns ``test_id``,
``output`` and optionally ``trial`` (default 0), ``error``, ``latency_ms``,
``prompt_tokens``, ``completion_tokens``, ``cost_usd`` and ``trace`` (JSON list
of tool calls). A case with no recording becomes an error row that says so.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.suite.source import read_text
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import ReplayTargetConfig


def _number(value: Any, cast: type) -> Any:
    if value in (None, ""):
        return None
    return cast(value)


def _logprobs(value: Any) -> list[float] | None:
    """A recording's ``logprobs`` (a list, or its JSON text as exported), else None."""
    if isinstance(value, str) and value.strip():
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    return None


def load_recordings(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    text = read_text(path)
    rows: list[tuple[int, dict[str, Any]]] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        for row in reader:
            rows.append((reader.line_num, dict(row)))
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SpecErrors.single(path, f"invalid JSON: {exc.msg}", line=number) from None
            if not isinstance(row, dict):
                raise SpecErrors.single(path, "each line must be a JSON object", line=number)
            rows.append((number, row))
    recordings: dict[tuple[str, int], dict[str, Any]] = {}
    for line, row in rows:
        if not row.get("test_id"):
            raise SpecErrors.single(path, "missing test_id", path=("test_id",), line=line)
        try:
            trial = int(row.get("trial") or 0)
        except ValueError:
            raise SpecErrors.single(path, "not an integer", path=("trial",), line=line) from None
        recordings[(str(row["test_id"]), trial)] = row
    return recordings


class ReplayTarget:
    def __init__(self, config: ReplayTargetConfig, base_dir: Path) -> None:
        self.name = config.name
        self.concurrency = config.concurrency
        self.path = (base_dir / config.path).resolve()
        self._recordings = load_recordings(self.path)

    async def generate(self, request: TargetRequest) -> ModelOutput:
        row = self._recordings.get((request.test_id, request.trial))
        if row is None:
            return ModelOutput(
                request.test_id, self.name, request.trial, None,
                error=f"no recorded output for test {request.test_id!r} trial {request.trial} "
                f"in {self.path.name}",
            )
        trace = row.get("trace") or []
        if isinstance(trace, str):
            trace = json.loads(trace) if trace.strip() else []
        output = row.get("output")
        return ModelOutput(
            test_id=request.test_id,
            target=self.name,
            trial=request.trial,
            output=None if output is None else str(output),
            error=row.get("error") or (None if output is not None else "recording has no output"),
            latency_ms=_number(row.get("latency_ms"), float),
            prompt_tokens=_number(row.get("prompt_tokens"), int),
            completion_tokens=_number(row.get("completion_tokens"), int),
            cost_usd=_number(row.get("cost_usd"), float),
            llm_calls=0,
            tool_calls=len(trace),
            trace=trace,
            # a recording exported from model_outputs carries it
            finish_reason=row["finish_reason"] if isinstance(row.get("finish_reason"), str) else None,
            logprobs=_logprobs(row.get("logprobs")),
        )

    async def aclose(self) -> None:
        return None
