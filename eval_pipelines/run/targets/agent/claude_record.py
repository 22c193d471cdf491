"""A Claude Code run (``claude_stream.ClaudeRun``) as the agent target's record.

The same shapes as ``recording`` gives the Pydantic AI loop, so graders, the judge and the stored
columns read both kinds alike:

* transcript items ``{"role", "kind", "text"/"tool"/"args"/"call_id", "step"}``: the task (and an
  appended system prompt), the model's texts and thinking, its tool calls, their results, and text
  the CLI injected (a loaded skill's body: ``"synthetic": true``); cut as ``recording`` cuts;
* the trace (``claude_stream.to_trace``, results cut at ``recording.MAX_TRACE_RESULT_CHARS``);
* the metrics of ``recording`` plus ``claude_code``: what the CLI itself reported.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.run.targets.agent.claude_stream import (
    AssistantEntry, ClaudeRun, ToolResultEntry, UserTextEntry, to_trace,
)
from eval_pipelines.run.targets.agent.recording import MAX_TRACE_RESULT_CHARS, _cut, _text


def transcript(run: ClaudeRun, prompt: str, appended_system: str | None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if appended_system:
        items.append(_text({"role": "system", "kind": "instructions", "step": 0}, "text", appended_system))
    items.append(_text({"role": "user", "kind": "text", "step": 0}, "text", prompt))
    step = 0
    for entry in run.transcript:
        if isinstance(entry, AssistantEntry):
            step = entry.step
            if entry.thinking:
                items.append(_text({"role": "assistant", "kind": "thinking", "step": step}, "text", entry.thinking))
            if entry.text:
                item = {"role": "assistant", "kind": "text", "step": step}
                if entry.synthetic:  # written by the CLI (an API error it gave up on), not the model
                    item["synthetic"] = True
                items.append(_text(item, "text", entry.text))
            for call in entry.tool_calls:
                items.append({"role": "assistant", "kind": "tool_call", "step": step, "tool": call.name,
                              "call_id": call.call_id,
                              **_text({}, "args", json.dumps(call.input, ensure_ascii=False))})
        elif isinstance(entry, ToolResultEntry):
            item = {"role": "tool", "kind": "tool_result", "step": step, "tool": entry.tool,
                    "call_id": entry.call_id}
            if entry.result.is_error:
                item["is_error"] = True
            items.append(_text(item, "text", entry.result.content))
        elif isinstance(entry, UserTextEntry):
            item = {"role": "user", "kind": "text", "step": step}
            if entry.synthetic:
                item["synthetic"] = True
            items.append(_text(item, "text", entry.text))
    return items


def trace(run: ClaudeRun) -> list[dict[str, Any]]:
    items = to_trace(run)
    for item in items:
        if isinstance(item.get("result"), str):
            item["result"] = _cut(item["result"], MAX_TRACE_RESULT_CHARS)[0]
    return items


def metrics(run: ClaudeRun, items: list[dict[str, Any]], trace_items: list[dict[str, Any]]) -> dict[str, Any]:
    """The metrics every agent run has (``recording.record``'s) and the CLI's own report."""
    usage = run.usage
    result = run.result
    return {
        "turns": run.turns, "tool_calls": len(trace_items), "tool_calls_by_tool": run.tool_calls_by_name,
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "tool_errors": sum(1 for t in trace_items if t.get("is_error")),
        "transcript_chars": sum(len(str(i.get("text") or i.get("args") or "")) for i in items),
        "claude_code": {
            "cli_version": run.init.cli_version if run.init else None,
            "session_id": run.session_id,
            "model": run.init.model if run.init else None,
            "permission_mode": run.init.permission_mode if run.init else None,
            "skills": run.init.skills if run.init else [],
            "subtype": result.subtype if result else None,
            "terminal_reason": result.terminal_reason if result else None,
            "num_turns": result.num_turns if result else None,
            "duration_ms": result.duration_ms if result else None,
            "duration_api_ms": result.duration_api_ms if result else None,
            "total_cost_usd": result.total_cost_usd if result else None,
            "permission_denials": [d.get("tool_name") for d in result.permission_denials] if result else [],
            "api_retries": [r.model_dump() for r in run.retries],
            "stream_lines": run.lines,
            "stream_notes": run.notes[:20],
        },
    }
