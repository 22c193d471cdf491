"""Canned tools for the tool-calling loop: pure functions, no I/O.

A test declares tools (``ToolSpec``) whose results are canned: the first
``results`` entry whose ``when`` arguments are a subset of the call's arguments
answers, else the tool's ``result``, else an error object. Arguments the model
sends that are not a JSON object never raise: they are kept as ``{"_raw": text}``
and the tool answers with an error object, which the model sees like any result.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from eval_pipelines.suite.models import ToolSpec

NO_CANNED_RESULT = {"error": "no canned result for these arguments"}


def openai_tools(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` field of a chat completion request."""
    return [
        {"type": "function",
         "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def arguments_match(when: dict[str, Any], args: dict[str, Any]) -> bool:
    """Every ``when`` key is in ``args`` with an equal value (``1 == 1.0``, ``True != 1``)."""
    return all(key in args and _equal(value, args[key]) for key, value in when.items())


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


def canned_result(tool: ToolSpec, args: dict[str, Any]) -> Any:
    """The result of calling ``tool`` with ``args``: first ``when`` match, then ``result``."""
    for case in tool.results:
        if arguments_match(case.when, args):
            return case.result
    if tool.result is not None:
        return tool.result
    return dict(NO_CANNED_RESULT)


def parse_arguments(text: str | None) -> tuple[dict[str, Any], str | None]:
    """(arguments, problem): a JSON object string -> dict; anything else -> ``{"_raw": text}``."""
    raw = text or ""
    if not raw.strip():
        return {}, None  # some servers send "" for a call without arguments
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return {"_raw": raw}, f"arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return {"_raw": raw}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def call_tool(tools: dict[str, ToolSpec], name: str, arguments: str | None) -> tuple[dict[str, Any], Any]:
    """(parsed arguments, result) of one call; unknown tools and bad arguments give error results."""
    args, problem = parse_arguments(arguments)
    if problem is not None:
        return args, {"error": problem}
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return args, {"error": f"unknown tool {name!r} (available: {known})"}
    return args, canned_result(tool, args)


def result_content(result: Any) -> str:
    """The ``content`` of the ``tool`` message sent back to the model."""
    return json.dumps(result, ensure_ascii=False, default=str)
