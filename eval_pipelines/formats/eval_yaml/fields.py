"""Field parsers the eval spec YAML uses both at suite level and in each test.

``LoadContext`` collects every error (with the file and line of the field)
and every deprecation warning, so one load reports all problems at once
instead of stopping at the first. The parsers read a raw YAML value, record
what is wrong with it, and return the typed value or a neutral default:
``input`` messages, ``assert`` lists, ``targets``, ``tools`` and ``max_steps``.

Used by ``eval_yaml`` (the suite) and ``eval_yaml_cases`` (its tests).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.assertions import parse_assertion, pydantic_errors
from eval_pipelines.suite.errors import SpecError, format_path, unknown_field_errors
from eval_pipelines.formats.agentv.assertions import custom_assertion_hint, normalise_assertion
from eval_pipelines.formats.agentv.parts import message_text, part_texts
from eval_pipelines.suite.models import TOOL_NAME_PATTERN, Assertion, Message, ToolSpec, tool_parameters_problem
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document

EXECUTION_KEYS = {"targets", "target", "trials", "cache", "skip_defaults", "evaluators", "workers"}
TOOL_KEYS = {"name", "description", "parameters", "result", "results"}
CANNED_RESULT_KEYS = {"when", "result"}


@dataclass
class LoadContext:
    """Where a load records its errors and warnings; ``policy`` says which files it may read."""

    policy: PathPolicy
    errors: list[SpecError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The third-party tool whose file this is ("promptfoo", "AgentV", "skill-creator"), or None for
    # our own formats: formats/compat.py words its rule for unknown keys with it.
    tool: str | None = None

    def error(self, doc: Document, path: tuple[Any, ...], message: str, expected: str | None = None) -> None:
        self.errors.append(SpecError(str(doc.file), path, message, doc.line_of(path), expected))

    def unknown_keys(self, doc: Document, path: tuple[Any, ...], raw: dict[str, Any], known: set[str]) -> None:
        self.errors.extend(unknown_field_errors(doc, path, raw, known))


def content_text(value: Any) -> str:
    """A message's content as text: a string as it is, typed content parts by their text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # typed content parts: their text (`value`, or OpenAI's `text`)
        return "\n".join(part_texts(value))
    if isinstance(value, dict):
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return str(value)


def parse_messages(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> list[Message] | None:
    """``input`` is a string or a list of ``{role, content}`` messages."""
    if isinstance(raw, str):
        return [Message(role="user", content=raw)]
    if isinstance(raw, list) and raw:
        messages: list[Message] = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict) or "content" not in item:
                ctx.error(doc, path + (i,), "invalid message", "a mapping with `role` and `content`")
                continue
            role = item.get("role", "user")
            if role not in ("system", "user", "assistant", "tool"):
                ctx.error(doc, path + (i, "role"), f"unknown role {role!r}",
                          "system, user, assistant or tool")
                continue
            text = message_text(ctx, doc, path + (i, "content"), item["content"])
            if text is not None:
                messages.append(Message(role=role, content=text))
        return messages
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return [Message(role="user", content=str(raw))]
    ctx.error(doc, path, f"got {type(raw).__name__}", "a string or a non-empty list of messages")
    return None


def assert_field(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any]) -> tuple[str, Any]:
    """The assertion list of a suite or test: ``assert``, or ``assertions`` (AgentV's later spelling)."""
    if "assert" in raw and "assertions" in raw:
        ctx.error(doc, path + ("assertions",), "both `assert` and `assertions` given", "one of them")
    key = "assertions" if "assertions" in raw and "assert" not in raw else "assert"
    return key, raw.get(key)


def parse_assertions(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> list[Assertion]:
    """An ``assert`` list; invalid items are recorded as errors and left out."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a list of assertions")
        return []
    out = []
    for i, item in enumerate(raw):
        item = normalise_assertion(item, format_path(path + (i,)), lambda m: ctx.warnings.append(f"{doc.file}: {m}"),
                                   doc.file, ctx.policy)
        before = len(ctx.errors)
        parsed = parse_assertion(item, doc, path + (i,), ctx.errors)
        if parsed is not None:
            out.append(parsed)
        elif len(ctx.errors) > before and (hint := custom_assertion_hint(item)):
            ctx.errors[before] = replace(ctx.errors[before], message=ctx.errors[before].message + hint)
    return out


def parse_targets(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any]) -> list[str] | None:
    """``targets`` (or the singular ``target``): a name or a list of names; None when absent."""
    value = raw.get("targets", raw.get("target"))
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    ctx.error(doc, path + ("targets",), "invalid targets", "a target name or a list of names")
    return None


def _parse_tool(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> ToolSpec | None:
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a tool mapping with `name`")
        return None
    ctx.unknown_keys(doc, path, raw, TOOL_KEYS)
    ok = True
    name = raw.get("name")
    if name is None:
        ctx.error(doc, path + ("name",), "required field is missing", "a tool name")
        ok = False
    elif not isinstance(name, str) or not re.fullmatch(TOOL_NAME_PATTERN, name):
        ctx.error(doc, path + ("name",), f"invalid tool name {name!r}",
                  "1-64 letters, digits, underscores or hyphens")
        ok = False
    if "parameters" in raw:
        problem = tool_parameters_problem(raw["parameters"])
        if problem is not None:
            inner, message = problem
            ctx.error(doc, path + ("parameters", *inner), message)
            ok = False
    results = raw.get("results")
    if results is not None:
        if not isinstance(results, list):
            ctx.error(doc, path + ("results",), f"got {type(results).__name__}",
                      "a list of {when: {argument: value}, result: ...}")
            ok = False
        else:
            for i, item in enumerate(results):
                where = path + ("results", i)
                if not isinstance(item, dict):
                    ctx.error(doc, where, f"got {type(item).__name__}", "a mapping with `when` and `result`")
                    ok = False
                    continue
                ctx.unknown_keys(doc, where, item, CANNED_RESULT_KEYS)
                if "result" not in item:
                    ctx.error(doc, where + ("result",), "required field is missing", "any JSON value")
                    ok = False
                if not isinstance(item.get("when", {}), dict):
                    ctx.error(doc, where + ("when",), "invalid when", "a mapping of argument name to value")
                    ok = False
    if not ok:
        return None
    try:
        return ToolSpec.model_validate({k: v for k, v in raw.items() if k in TOOL_KEYS})
    except ValidationError as exc:
        ctx.errors.extend(pydantic_errors(doc, path, exc, list(ToolSpec.model_fields)))
        return None


def parse_tools(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> list[ToolSpec]:
    """A ``tools`` list; names must be unique within it."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a list of tools")
        return []
    tools: list[ToolSpec] = []
    first: dict[str, int] = {}
    for i, item in enumerate(raw):
        tool = _parse_tool(ctx, doc, path + (i,), item)
        if tool is None:
            continue
        if tool.name in first:
            ctx.error(doc, path + (i, "name"),
                      f"duplicate tool name {tool.name!r} (first declared at {path[-1]}[{first[tool.name]}])",
                      "unique tool names")
            continue
        first[tool.name] = i
        tools.append(tool)
    return tools


def parse_max_steps(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> int | None:
    """``max_steps``: a positive integer; None when absent or invalid."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        ctx.error(doc, path, f"invalid max_steps {raw!r}", "a positive integer")
        return None
    return raw
