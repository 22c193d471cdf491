"""What an agent run leaves behind, from Pydantic AI's message history.

* the transcript: one item per message part, in order: ``{"role": "system"|"user"|"assistant"|"tool",
  "kind": "instructions"|"text"|"tool_call"|"tool_result"|"retry", "text"/"tool"/"args"/"call_id",
  "step"}``; every text and every tool result is cut at ``MAX_TRANSCRIPT_ITEM_CHARS`` characters
  (``"truncated": true`` then);
* the trace the existing graders read (``tool_trajectory``, ``execution_metrics``, ...): one item per
  tool call ``{"tool", "args", "result", "step", "call_id"}``, as the tool-calling loop of the openai
  target records it;
* the metrics: turns (model responses), tool calls per tool, tokens, errors, and so on.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Sequence

MAX_TRANSCRIPT_ITEM_CHARS = 4_000
MAX_TRACE_RESULT_CHARS = 4_000


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


def _text(item: dict[str, Any], key: str, value: str, limit: int = MAX_TRANSCRIPT_ITEM_CHARS) -> dict[str, Any]:
    item[key], cut = _cut(value, limit)
    if cut:
        item["truncated"] = True
    return item


def _args(part: Any) -> dict[str, Any]:
    try:
        return part.args_as_dict()
    except Exception:  # noqa: BLE001 - arguments that are not a JSON object: kept as written
        return {"_raw": part.args if isinstance(part.args, str) else json.dumps(part.args, default=str)}


def record(messages: Sequence[Any], instructions: str | None) -> tuple[list[dict], list[dict], dict[str, Any]]:
    """(transcript, trace, partial metrics) of a run's messages."""
    from pydantic_ai.messages import (
        ModelRequest, ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart,
    )

    transcript: list[dict[str, Any]] = []
    if instructions:
        transcript.append(_text({"role": "system", "kind": "instructions", "step": 0}, "text", instructions))
    trace: list[dict[str, Any]] = []
    pending: dict[str, dict[str, Any]] = {}  # call id -> its trace item, waiting for its result
    step = 0
    input_tokens = output_tokens = 0
    for message in messages:
        if isinstance(message, ModelResponse):
            step += 1
            input_tokens += message.usage.input_tokens or 0
            output_tokens += message.usage.output_tokens or 0
            for part in message.parts:
                if isinstance(part, TextPart) and part.content:
                    transcript.append(_text({"role": "assistant", "kind": "text", "step": step}, "text", part.content))
                elif isinstance(part, ToolCallPart):
                    args = _args(part)
                    transcript.append({"role": "assistant", "kind": "tool_call", "step": step, "tool": part.tool_name,
                                       "call_id": part.tool_call_id,
                                       **_text({}, "args", json.dumps(args, ensure_ascii=False))})
                    item = {"tool": part.tool_name, "args": args, "result": None, "step": step,
                            "call_id": part.tool_call_id}
                    trace.append(item)
                    pending[part.tool_call_id] = item
        elif isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    content = part.content if isinstance(part.content, str) else json.dumps(part.content, default=str)
                    transcript.append(_text({"role": "user", "kind": "text", "step": step}, "text", content))
                elif isinstance(part, ToolReturnPart):
                    result = part.model_response_str()
                    transcript.append(_text({"role": "tool", "kind": "tool_result", "step": step,
                                             "tool": part.tool_name, "call_id": part.tool_call_id}, "text", result))
                    if (item := pending.pop(part.tool_call_id, None)) is not None:
                        item["result"] = _cut(result, MAX_TRACE_RESULT_CHARS)[0]
                elif isinstance(part, RetryPromptPart):
                    problem = part.model_response()
                    transcript.append(_text({"role": "tool" if part.tool_name else "user", "kind": "retry",
                                             "step": step, "tool": part.tool_name, "call_id": part.tool_call_id},
                                            "text", problem))
                    if (item := pending.pop(part.tool_call_id, None)) is not None:
                        item["result"] = {"error": _cut(problem, MAX_TRACE_RESULT_CHARS)[0]}
    metrics = {"turns": step, "tool_calls": len(trace),
               "tool_calls_by_tool": dict(Counter(item["tool"] for item in trace)),
               "input_tokens": input_tokens, "output_tokens": output_tokens,
               "transcript_chars": sum(len(str(i.get("text") or i.get("args") or "")) for i in transcript)}
    return transcript, trace, metrics


def final_text(messages: Sequence[Any]) -> str:
    """The last text the model wrote (the answer when a run stopped before it finished)."""
    from pydantic_ai.messages import ModelResponse, TextPart

    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            texts = [p.content for p in message.parts if isinstance(p, TextPart) and p.content]
            if texts:
                return "\n".join(texts)
    return ""
