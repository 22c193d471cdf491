"""``tool_call_f1`` (promptfoo's ``tool-call-f1``, src/assertions/toolCallF1.ts): F1 of the
tools the model called against the expected tool names, as unordered sets.

The names called are those of the run's tool calls (the ``trace`` the tool-calling loop
records, as ``tool_trajectory`` reads it) together with those written in the output text,
read as promptfoo's ``extractToolNames`` reads a provider's output: the whole text as JSON,
else every JSON object or array that starts and ends a line outside code fences; in it, OpenAI
``tool_calls[].function.name`` (or ``.name``), ``{type: function_call|tool_use, name}``,
``{functionCall: {name}}``, ``{toolCall: {functionCalls: [{name}]}}``, and lists of these,
``{function: {name}}`` or ``{name}``.

precision = |called ∩ expected| / |called|, recall = |called ∩ expected| / |expected|,
F1 = 2PR / (P + R) (0 when both are 0). Passes when F1 reaches ``threshold`` (default 1,
promptfoo's: exactly the expected tools); negated, when it is below it. The grade score is
the F1, its calibrated score ``_judging.calibrate(f1, threshold)``; ``details`` has ``f1``, ``precision``, ``recall``,
``expected`` and ``called``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import Field, field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._judging import calibrate
from eval_pipelines.grading.graders.tool_trajectory import actual_calls


def _names_in(data: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(data, dict):
        if isinstance(data.get("tool_calls"), list):
            for call in data["tool_calls"]:
                if isinstance(call, dict):
                    function = call.get("function")
                    if isinstance(function, dict) and isinstance(function.get("name"), str):
                        names.add(function["name"])
                    if isinstance(call.get("name"), str):
                        names.add(call["name"])
        elif data.get("type") in ("tool_use", "function_call") and isinstance(data.get("name"), str):
            names.add(data["name"])
        elif isinstance(data.get("functionCall"), dict):
            if isinstance(data["functionCall"].get("name"), str):
                names.add(data["functionCall"]["name"])
        elif isinstance(data.get("toolCall"), dict):
            for call in data["toolCall"].get("functionCalls") or []:
                if isinstance(call, dict) and isinstance(call.get("name"), str):
                    names.add(call["name"])
    elif isinstance(data, list):
        for block in data:
            if not isinstance(block, dict):
                continue
            function = block.get("functionCall") if isinstance(block.get("functionCall"), dict) else (
                block.get("function") if isinstance(block.get("function"), dict) else None)
            if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                names.add(block["name"])
            elif function is not None:
                if isinstance(function.get("name"), str):
                    names.add(function["name"])
            elif isinstance(block.get("name"), str):
                names.add(block["name"])
    return names


_LINE_START = re.compile(r"^[ \t]*[\[{]", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)


def _fenced(text: str) -> list[tuple[int, int]]:
    """Spans of fenced code blocks (their JSON is not read, as promptfoo's scanner skips fences)."""
    spans, opened = [], None
    for match in _FENCE.finditer(text):
        if opened is None:
            opened = match
        elif match.group(1)[0] == opened.group(1)[0] and len(match.group(1)) >= len(opened.group(1)):
            spans.append((opened.start(), match.end()))
            opened = None
    if opened is not None:
        spans.append((opened.start(), len(text)))
    return spans


def names_in_text(text: str) -> set[str]:
    """Tool names in an output text: the text as JSON, else each JSON block on whole lines
    outside code fences."""
    try:
        return _names_in(json.loads(text))
    except ValueError:
        pass
    names: set[str] = set()
    decoder = json.JSONDecoder()
    fences = _fenced(text)
    position = 0
    for match in _LINE_START.finditer(text):
        start = match.end() - 1
        if start < position:  # inside a block already read
            continue
        try:
            data, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if any(a < end and start < b for a, b in fences):
            continue
        rest = text[end:]
        if rest.strip(" \t") == "" or rest.lstrip(" \t").startswith(("\n", "\r")):
            names |= _names_in(data)
            position = end
    return names


class ToolCallF1Params(Params):
    value: list[str] = Field(min_length=1)
    threshold: float = Field(default=1.0, ge=0, le=1)

    @field_validator("value")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        names = [v.strip() for v in value if v.strip()]
        if not names:
            raise ValueError("name at least one expected tool")
        return names


class ToolCallF1(Grader[ToolCallF1Params]):
    type = "tool_call_f1"
    group = "agent"  # section of docs/assertions.md
    Params = ToolCallF1Params

    def grade(self, params: ToolCallF1Params, inp: GradeInput) -> Outcome:
        expected = set(params.value)
        called = {call.name for call in actual_calls(inp.trace)} | names_in_text(inp.output)
        both = len(expected & called)
        precision = both / len(called) if called else 0.0
        recall = both / len(expected)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        passed = f1 >= params.threshold
        reason = (f"Tool Call F1 {f1:.3f} (precision={precision:.3f}, recall={recall:.3f}) "
                  f"{'>=' if passed else '<'} threshold {params.threshold:g}. Expected: "
                  f"[{', '.join(sorted(expected))}], Called: [{', '.join(sorted(called)) or '(none)'}]")
        return Outcome(f1, reason,
                       {"f1": f1, "precision": precision, "recall": recall, "threshold": params.threshold,
                        "expected": sorted(expected), "called": sorted(called), "passed": passed}, passed=passed,
                       calibrated=calibrate(f1, params.threshold))
