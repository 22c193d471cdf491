"""A traced run's trajectory from its OpenTelemetry spans, as promptfoo builds it
(src/assertions/trajectoryUtils.ts ``extractTrajectorySteps``, src/tracing/toolAttributes.ts);
no grader here.

Spans in start order (then end, then arrival) each give one step: a ``command`` (a shell tool's
command, a ``command`` attribute, or an ``exec <cmd>`` span), a ``tool`` (a tool-name attribute
such as ``tool.name`` / ``gen_ai.tool.name``, or ``mcp <server>/<tool>``), a ``search`` (a search
query attribute, or a ``search <query>`` span), ``reasoning`` (``reasoning...`` spans, Codex
reasoning items), ``message`` (``agent response`` / ``send input``, Codex agent messages), or a
plain ``span`` named by the span. Each step also matches by its span's name (its aliases).

:func:`steps_of` is what trajectory graders read: the span steps when the output has a trace
with spans and the run recorded no tool calls of its own (script providers), else the recorded
tool calls (``_trajectory_steps``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.graders._trajectory_steps import COMMAND_TOOLS, Step, steps

_FAMILIES = [  # (prefix, name suffixes, argument suffixes, extra name keys, extra argument keys)
    ("tool", (".name", "_name"), (".args", ".arguments", ".input", "_args", "_arguments", "_input"), ("tool",), ()),
    ("function", (".name", "_name"), (".args", ".arguments", ".input", "_args", "_arguments"), (), ()),
    ("ai.toolCall", (".name",), (".args", ".arguments", ".input"), (), ()),
    ("gen_ai.tool", (".name",), (".args", ".arguments", ".input"), (),
     ("gen_ai.tool.call.args", "gen_ai.tool.call.arguments")),
    ("agent.tool", ("_name",), (".args", ".arguments", ".input"), ("agent.tool", "agent.toolName"), ()),
    ("codex.mcp", (), (".args", ".arguments", ".input"), ("codex.mcp.tool",), ()),
]
TOOL_NAME_KEYS = [k for p, names, _, extra, _ in _FAMILIES for k in [p + s for s in names] + list(extra)]
TOOL_ARG_KEYS = [k for p, _, args, _, extra in _FAMILIES for k in [p + s for s in args] + list(extra)] + [
    "args", "arguments", "input"]
COMMAND_KEYS = ("codex.command", "command", "command.name", "command_name")
SEARCH_KEYS = ("codex.search.query", "search.query", "search_query")
SEARCH_NAME = re.compile(r"(^|[\s._:/-])(search|find|lookup|retriev(?:e|al))($|[\s._:/-])", re.IGNORECASE)
SEARCH_KEY = re.compile(r"(^|[._])(search|lookup|retriev(?:e|al))($|[._])", re.IGNORECASE)


def _first_string(attributes: dict[str, Any], keys: Any) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _structured(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text
    return value


def _tool_name(span: dict[str, Any]) -> str | None:
    attributes = span.get("attributes") or {}
    direct = _first_string(attributes, TOOL_NAME_KEYS)
    if direct:
        return direct
    for key, value in attributes.items():
        if not isinstance(value, str) or not value.strip():
            continue
        text = value.strip()
        if text[:1] in "[{":
            try:
                if isinstance(json.loads(text), (dict, list)):
                    continue  # a list of available tools is not a tool name
            except ValueError:
                pass
        if re.search(r"tool.?name|function.?name", key, re.IGNORECASE):
            return text
        if re.search(r"(^|[._])tool($|[._])", key, re.IGNORECASE) and not re.search(
                r"result|output|definition", key, re.IGNORECASE):
            return text
    name = span["name"]
    if name.startswith("mcp ") and 0 <= name.rfind("/") < len(name) - 1:
        return name[name.rfind("/") + 1:].strip()
    return None


def _tool_args(span: dict[str, Any]) -> Any:
    attributes = span.get("attributes") or {}
    for key in TOOL_ARG_KEYS:
        value = _structured(attributes.get(key))
        if value is not None:
            return value
    for key, raw in attributes.items():
        if re.search(r"result|output|error|status", key, re.IGNORECASE):
            continue
        if re.search(r"(^|[._])(arguments|args|input)($|[._])", key, re.IGNORECASE):
            value = _structured(raw)
            if value is not None:
                return value
    return None


def _is_command_tool(tool: str | None, args: Any) -> bool:
    name = (tool or "").strip().lower()
    return bool(name) and (name in COMMAND_TOOLS or (name == "execute" and isinstance(args, dict)
                                                      and any(k in args for k in ("cmd", "command", "commands"))))


def _command(span: dict[str, Any], tool: str | None, args: Any) -> str | None:
    attributes = span.get("attributes") or {}
    direct = _first_string(attributes, COMMAND_KEYS)
    if direct:
        return direct
    for key, value in attributes.items():
        if isinstance(value, str) and value.strip() and re.search("command", key, re.IGNORECASE) and not re.search(
                "output|result", key, re.IGNORECASE):
            return value.strip()
    if _is_command_tool(tool, args) and isinstance(args, dict):
        for key, separator in (("cmd", " "), ("command", " "), ("commands", "; ")):
            if key in args:
                value = args[key]
                if isinstance(value, str) and value.strip():
                    return value.strip()
                if isinstance(value, list):
                    return separator.join(str(p).strip() for p in value if str(p).strip()) or None
                break
    if span["name"].startswith("exec "):
        return span["name"][len("exec "):].strip()
    return None


def _search(span: dict[str, Any]) -> str | None:
    attributes = span.get("attributes") or {}
    direct = _first_string(attributes, SEARCH_KEYS)
    if direct:
        return direct
    query = _first_string(attributes, ("query",))
    name = span["name"]
    if query and (SEARCH_NAME.search(name) or name.startswith("search ")
                  or any(k != "query" and SEARCH_KEY.search(k) for k in attributes)):
        return query
    if name.startswith("search "):
        return name[len("search "):].strip('"').strip()
    return None


def span_steps(spans: list[dict[str, Any]]) -> list[Step]:
    ordered = sorted(enumerate(spans), key=lambda item: (
        item[1]["startTime"], item[1].get("endTime", item[1]["startTime"]), item[0]))
    out = []
    for _, span in ordered:
        name = span["name"]
        attributes = span.get("attributes") or {}
        tool, args = _tool_name(span), _tool_args(span)
        command = _command(span, tool, args)
        query = _search(span)
        aliases = [name]
        if command and _is_command_tool(tool, args):
            kind, label = "command", command
            aliases += [command, *([tool] if tool else []), command.split()[0]]
        elif tool:
            kind, label = "tool", tool
            aliases.append(tool)
        elif command:
            kind, label = "command", command
            aliases += [command, command.split()[0]]
        elif query:
            kind, label = "search", query
            aliases.append(query)
        elif attributes.get("codex.item.type") == "reasoning" or re.match(r"^reasoning([_\s]|$)", name, re.I):
            kind, label = "reasoning", name
            aliases.append("reasoning")
        elif attributes.get("codex.item.type") == "agent_message" or name in ("agent response", "send input"):
            kind, label = "message", name
            aliases.append("message")
        else:
            kind, label = "span", name
        out.append(Step(kind, label, tuple(dict.fromkeys(a for a in aliases if a))))
    return out


def steps_of(inp: GradeInput) -> list[Step]:
    recorded = steps(inp.trace)
    if recorded or inp.otel is None or not inp.otel.spans:
        return recorded
    return span_steps(inp.otel.as_promptfoo()["spans"])
