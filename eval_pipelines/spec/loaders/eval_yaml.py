"""Seed 001: the eval spec v2 YAML (and AgentV's spellings of it).

Handles the metadata block, ``tests`` inline / as a dataset path / as a list
mixing inline tests and ``file://`` references (globs allowed, cycles refused),
suite-level ``input`` and ``assert`` inheritance with ``skip_defaults``,
``execution`` (targets, trials, cache), and the deprecated aliases
``execution.evaluators`` and test-level ``rubrics``.

Tools: ``tools`` (a list of ``{name, description, parameters, result,
results}``) and ``max_steps`` at suite level are defaults for every test; a
test's own ``tools`` are added to the suite's, replacing those of the same
name, and its ``max_steps`` wins. The merged list is stored on each test.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval_pipelines.spec.assertions import parse_assertion, pydantic_errors
from eval_pipelines.spec.loaders.datasets import read_test_rows
from eval_pipelines.spec.errors import SpecError, SpecErrors, unknown_field_errors
from eval_pipelines.spec.models import (
    TOOL_NAME_PATTERN, Assertion, Execution, Message, RegressionSettings, Settings, Suite, TestCase, ToolSpec,
    Trials, Workspace, merge_tools, tool_parameters_problem,
)
from eval_pipelines.spec.paths import PathPolicy
from eval_pipelines.spec.source import Document

NAME_PATTERN = re.compile(r"^[a-z0-9-]+$")
SUITE_KEYS = {
    "$schema", "name", "description", "version", "author", "tags", "license", "requires",
    "execution", "workspace", "assert", "tests", "input", "target", "thresholds", "settings",
    "evaluator", "dataset", "judge", "baseline", "regression", "blocking", "tools", "max_steps",
}
TEST_KEYS = {
    "id", "name", "description", "input", "criteria", "expected_outcome", "expected_output",
    "assert", "rubrics", "execution", "skip_defaults", "metadata", "tags", "category",
    "timeout_ms", "target", "conversation_id", "note", "tools", "max_steps",
}
EXECUTION_KEYS = {"targets", "target", "trials", "cache", "skip_defaults", "evaluators"}
TRIALS_KEYS = {"count", "strategy", "cost_limit_usd"}
TOOL_KEYS = {"name", "description", "parameters", "result", "results"}
CANNED_RESULT_KEYS = {"when", "result"}
MAX_INCLUDE_DEPTH = 16


@dataclass
class _Ctx:
    policy: PathPolicy
    errors: list[SpecError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def error(self, doc: Document, path: tuple[Any, ...], message: str, expected: str | None = None) -> None:
        self.errors.append(SpecError(str(doc.file), path, message, doc.line_of(path), expected))

    def unknown_keys(self, doc: Document, path: tuple[Any, ...], raw: dict[str, Any], known: set[str]) -> None:
        self.errors.extend(unknown_field_errors(doc, path, raw, known))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # typed content parts: keep the text ones
        return "\n".join(
            p.get("text", "") if isinstance(p, dict) else str(p) for p in value
        )
    return str(value)


def parse_messages(ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any) -> list[Message] | None:
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
            messages.append(Message(role=role, content=_text(item["content"])))
        return messages
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return [Message(role="user", content=str(raw))]
    ctx.error(doc, path, f"got {type(raw).__name__}", "a string or a non-empty list of messages")
    return None


def _assert_list(ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any) -> list[Assertion]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a list of assertions")
        return []
    out = []
    for i, item in enumerate(raw):
        parsed = parse_assertion(item, doc, path + (i,), ctx.errors)
        if parsed is not None:
            out.append(parsed)
    return out


def _targets(ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: dict[str, Any]) -> list[str] | None:
    value = raw.get("targets", raw.get("target"))
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    ctx.error(doc, path + ("targets",), "invalid targets", "a target name or a list of names")
    return None


def _execution(ctx: _Ctx, doc: Document, raw: Any) -> tuple[Execution, list[Assertion]]:
    path: tuple[Any, ...] = ("execution",)
    if raw is None:
        return Execution(), []
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a mapping")
        return Execution(), []
    ctx.unknown_keys(doc, path, raw, EXECUTION_KEYS)
    trials = Trials()
    raw_trials = raw.get("trials")
    if isinstance(raw_trials, int) and not isinstance(raw_trials, bool):
        raw_trials = {"count": raw_trials}
    if raw_trials is not None:
        if not isinstance(raw_trials, dict):
            ctx.error(doc, path + ("trials",), "invalid trials", "a mapping with `count`")
        else:
            ctx.unknown_keys(doc, path + ("trials",), raw_trials, TRIALS_KEYS)
            try:
                trials = Trials.model_validate({k: v for k, v in raw_trials.items() if k in TRIALS_KEYS})
            except ValidationError as exc:
                ctx.errors.extend(pydantic_errors(doc, path + ("trials",), exc))
    cache = raw.get("cache", True)
    if not isinstance(cache, bool):
        ctx.error(doc, path + ("cache",), f"got {cache!r}", "true or false")
        cache = True
    evaluators: list[Assertion] = []
    if "evaluators" in raw:
        ctx.warnings.append(f"{doc.file}: execution.evaluators is deprecated; use `assert`")
        evaluators = _assert_list(ctx, doc, path + ("evaluators",), raw["evaluators"])
    return Execution(targets=_targets(ctx, doc, path, raw) or [], trials=trials, cache=cache), evaluators


def _metadata(ctx: _Ctx, doc: Document, raw: dict[str, Any]) -> dict[str, Any]:
    meta_keys = ("name", "description", "version", "author", "tags", "license", "requires")
    present = any(k in raw for k in meta_keys)
    out: dict[str, Any] = {}
    if not present:
        return out
    for key in ("name", "description"):
        if key not in raw:
            ctx.error(doc, (key,), "required when any metadata field is present", "a non-empty string")
    name = raw.get("name")
    if name is not None:
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or len(name) > 64:
            ctx.error(doc, ("name",), f"invalid name {name!r}",
                      "1-64 characters of lowercase letters, digits and hyphens")
        else:
            out["name"] = name
    description = raw.get("description")
    if description is not None:
        if not isinstance(description, str) or not 1 <= len(description) <= 1024:
            ctx.error(doc, ("description",), "invalid description", "a string of 1-1024 characters")
        else:
            out["description"] = description
    for key in ("version", "author", "license"):
        if key in raw:
            if isinstance(raw[key], float):
                ctx.error(doc, (key,), f"{raw[key]!r} was read as a number", 'a quoted string, e.g. "1.10"')
            elif isinstance(raw[key], (str, int, float)) and not isinstance(raw[key], bool):
                out[key] = str(raw[key])
            else:
                ctx.error(doc, (key,), f"got {type(raw[key]).__name__}", "a string")
    if "tags" in raw:
        if isinstance(raw["tags"], list) and all(isinstance(t, str) for t in raw["tags"]):
            out["tags"] = raw["tags"]
        else:
            ctx.error(doc, ("tags",), "invalid tags", "a list of strings")
    if "requires" in raw:
        req = raw["requires"]
        if isinstance(req, dict) and all(isinstance(v, str) for v in req.values()):
            out["requires"] = {str(k): v for k, v in req.items()}
        else:
            ctx.error(doc, ("requires",), "invalid requires", "a mapping of tool name to version range")
    return out


def _parse_tool(ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any) -> ToolSpec | None:
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


def _parse_tools(ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any) -> list[ToolSpec]:
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


def _max_steps(ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        ctx.error(doc, path, f"invalid max_steps {raw!r}", "a positive integer")
        return None
    return raw


@dataclass
class _Defaults:
    input: list[Message]
    assertions: list[Assertion]
    tools: list[ToolSpec] = field(default_factory=list)
    max_steps: int | None = None


def _parse_test(
    ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any, defaults: _Defaults, index: int
) -> TestCase | None:
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a test mapping")
        return None
    ctx.unknown_keys(doc, path, raw, TEST_KEYS)
    test_id = raw.get("id")
    if test_id is None:
        test_id = f"test-{index + 1}"
    elif not isinstance(test_id, (str, int)) or isinstance(test_id, bool) or str(test_id).strip() == "":
        ctx.error(doc, path + ("id",), f"invalid id {test_id!r}", "a non-empty string")
        return None
    if "input" not in raw:
        ctx.error(doc, path + ("input",), "required field is missing", "a string or a list of messages")
        return None
    messages = parse_messages(ctx, doc, path + ("input",), raw["input"])
    if messages is None:
        return None
    assertions = _assert_list(ctx, doc, path + ("assert",), raw.get("assert"))
    if "rubrics" in raw:
        ctx.warnings.append(f"{doc.file}: {path}: test-level `rubrics` is deprecated; "
                            "use `assert: [{type: rubrics, criteria: [...]}]`")
        rubric = {"type": "rubrics", "criteria": raw["rubrics"]}
        parsed = parse_assertion(rubric, doc, path + ("rubrics",), ctx.errors)
        if parsed:
            assertions.append(parsed)
    execution = raw.get("execution") or {}
    if not isinstance(execution, dict):
        ctx.error(doc, path + ("execution",), "invalid execution", "a mapping")
        execution = {}
    ctx.unknown_keys(doc, path + ("execution",), execution, EXECUTION_KEYS)
    skip_defaults = bool(raw.get("skip_defaults", execution.get("skip_defaults", False)))
    if not skip_defaults:
        assertions = assertions + defaults.assertions
    criteria_text = raw.get("criteria", raw.get("expected_outcome"))
    if not assertions and isinstance(criteria_text, str) and criteria_text.strip():
        # Seed 001 / AgentV: a test with only `criteria` is judged on them.
        assertions = [Assertion(type="llm_judge", name="criteria")]
    targets = _targets(ctx, doc, path + ("execution",), execution)
    if targets is None and "target" in raw:
        targets = _targets(ctx, doc, path, {"target": raw["target"]})
    criteria = raw.get("criteria", raw.get("expected_outcome"))
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        ctx.error(doc, path + ("metadata",), "invalid metadata", "a mapping")
        metadata = {}
    own_tools = _parse_tools(ctx, doc, path + ("tools",), raw.get("tools"))
    max_steps = _max_steps(ctx, doc, path + ("max_steps",), raw.get("max_steps"))
    expected = raw.get("expected_output")
    if isinstance(expected, list) and expected and all(isinstance(m, dict) and "content" in m for m in expected):
        expected = "\n".join(_text(m["content"]) for m in expected)
    try:
        return TestCase(
            id=str(test_id),
            name=raw.get("name"),
            description=raw.get("description"),
            input=defaults.input + messages,
            expected_output=expected,
            criteria=None if criteria is None else str(criteria),
            assertions=assertions,
            targets=targets,
            timeout_ms=raw.get("timeout_ms"),
            tools=merge_tools(defaults.tools, own_tools),
            max_steps=max_steps or defaults.max_steps,
            category=raw.get("category") or metadata.get("category"),
            tags=raw.get("tags") or [],
            metadata=metadata,
            source_file=str(doc.file),
            source_line=doc.line_of(path),
        )
    except ValidationError as exc:
        ctx.errors.extend(pydantic_errors(doc, path, exc))
        return None


def _resolve_reference(ctx: _Ctx, doc: Document, path: tuple[Any, ...], ref: str) -> list[Path]:
    pattern = ref.removeprefix("file://")
    base = doc.file.parent
    candidate = Path(pattern) if Path(pattern).is_absolute() else base / pattern
    if any(ch in pattern for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(str(candidate), recursive=True))
        if not matches:
            ctx.error(doc, path, f"no file matches {ref!r}")
        return [m for m in matches if ctx.policy.check(m, doc, path, ctx.errors)]
    resolved = ctx.policy.resolve(candidate, pattern)
    if not ctx.policy.check(resolved, doc, path, ctx.errors):
        return []  # checked first: say nothing about files outside the package
    if not resolved.is_file():
        if resolved.exists():  # a folder, a FIFO (would block), a device (/dev/zero never ends)
            ctx.error(doc, path, f"not a regular file: {ref}", "a plain file")
        else:
            ctx.error(doc, path, f"file not found: {ref}", "a path relative to the eval file")
        return []
    return [resolved]


def _collect_tests(
    ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any, defaults: _Defaults,
    stack: tuple[Path, ...], out: list[TestCase],
) -> None:
    if isinstance(raw, str):
        for file in _resolve_reference(ctx, doc, path, raw):
            _include(ctx, doc, path, file, defaults, stack, out)
        return
    if not isinstance(raw, list):
        ctx.error(doc, path, f"got {type(raw).__name__}",
                  "a list of tests, a dataset path, or a list with file:// references")
        return
    for i, item in enumerate(raw):
        if isinstance(item, str):
            if not item.startswith("file://"):
                ctx.error(doc, path + (i,), f"string entry {item!r}", "a test mapping or a file:// reference")
                continue
            for file in _resolve_reference(ctx, doc, path + (i,), item):
                _include(ctx, doc, path + (i,), file, defaults, stack, out)
        else:
            test = _parse_test(ctx, doc, path + (i,), item, defaults, len(out))
            if test is not None:
                out.append(test)


def _include(
    ctx: _Ctx, doc: Document, path: tuple[Any, ...], file: Path, defaults: _Defaults,
    stack: tuple[Path, ...], out: list[TestCase],
) -> None:
    resolved = file.resolve()
    if resolved in stack:
        chain = " -> ".join(p.name for p in (*stack, resolved))
        ctx.error(doc, path, f"file:// reference cycle: {chain}")
        return
    if len(stack) > MAX_INCLUDE_DEPTH:
        ctx.error(doc, path, f"file:// references nested deeper than {MAX_INCLUDE_DEPTH}")
        return
    try:
        rows = read_test_rows(resolved)
    except SpecErrors as exc:
        ctx.errors.extend(exc.errors)
        return
    for i, item in enumerate(rows.data):
        if isinstance(item, str) and item.startswith("file://"):
            for nested in _resolve_reference(ctx, rows, (i,), item):
                _include(ctx, rows, (i,), nested, defaults, (*stack, resolved), out)
            continue
        test = _parse_test(ctx, rows, (i,), item, defaults, len(out))
        if test is not None:
            out.append(test)


def load_eval_yaml(doc: Document, policy: PathPolicy) -> tuple[Suite, list[str]]:
    ctx = _Ctx(policy)
    raw = doc.data
    if not isinstance(raw, dict):
        raise SpecErrors.single(doc.file, f"top level is {type(raw).__name__}", line=1,
                                expected="a mapping with `tests`")
    ctx.unknown_keys(doc, (), raw, SUITE_KEYS)
    meta = _metadata(ctx, doc, raw)
    execution, evaluators = _execution(ctx, doc, raw.get("execution"))
    if execution.targets == [] and "target" in raw:
        execution.targets = _targets(ctx, doc, (), {"target": raw["target"]}) or []
    suite_input: list[Message] = []
    if "input" in raw:
        suite_input = parse_messages(ctx, doc, ("input",), raw["input"]) or []
    defaults = _Defaults(suite_input, _assert_list(ctx, doc, ("assert",), raw.get("assert")) + evaluators,
                         _parse_tools(ctx, doc, ("tools",), raw.get("tools")),
                         _max_steps(ctx, doc, ("max_steps",), raw.get("max_steps")))
    thresholds = raw.get("thresholds") or {}
    if not isinstance(thresholds, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in thresholds.values()
    ):
        ctx.error(doc, ("thresholds",), "invalid thresholds", "a mapping of metric name to number")
        thresholds = {}
    settings = Settings()
    if "settings" in raw:
        try:
            settings = Settings.model_validate(raw["settings"])
        except ValidationError as exc:
            ctx.errors.extend(pydantic_errors(doc, ("settings",), exc, list(Settings.model_fields)))
    regression = RegressionSettings()
    if "regression" in raw:
        try:
            regression = RegressionSettings.model_validate(raw["regression"])
        except ValidationError as exc:
            ctx.errors.extend(pydantic_errors(doc, ("regression",), exc, list(RegressionSettings.model_fields)))
    if not isinstance(raw.get("blocking", False), bool):
        ctx.error(doc, ("blocking",), f"got {raw['blocking']!r}", "true or false")
    workspace = None
    if "workspace" in raw:
        try:
            workspace = Workspace.model_validate(raw["workspace"])
        except ValidationError as exc:
            ctx.errors.extend(pydantic_errors(doc, ("workspace",), exc, list(Workspace.model_fields)))
    tests: list[TestCase] = []
    if "tests" not in raw:
        ctx.error(doc, ("tests",), "required field is missing",
                  "a list of tests or a path to a .jsonl/.csv/.yaml dataset")
    else:
        _collect_tests(ctx, doc, ("tests",), raw["tests"], defaults, (doc.file.resolve(),), tests)
    seen: dict[str, int] = {}
    for position, test in enumerate(tests):
        if test.id in seen:
            ctx.errors.append(SpecError(test.source_file or str(doc.file), ("tests", position, "id"),
                                        f"duplicate test id {test.id!r} (first used by test {seen[test.id]})",
                                        test.source_line))
        seen.setdefault(test.id, position)
    if "tests" in raw and not tests and not ctx.errors:
        ctx.error(doc, ("tests",), "suite has no tests", "at least one test")
    if ctx.errors:
        raise SpecErrors(ctx.errors)
    suite = Suite(
        name=meta.get("name") or doc.file.stem,
        description=meta.get("description"),
        version=meta.get("version"),
        author=meta.get("author"),
        tags=meta.get("tags", []),
        license=meta.get("license"),
        requires=meta.get("requires", {}),
        format="eval-yaml",
        source_file=str(doc.file),
        execution=execution,
        settings=settings,
        thresholds={k: float(v) for k, v in thresholds.items()},
        judge=raw.get("judge") if isinstance(raw.get("judge"), str) else None,
        workspace=workspace,
        baseline=str(raw["baseline"]) if raw.get("baseline") is not None else None,
        regression=regression,
        blocking=raw.get("blocking") is True,
        tools=defaults.tools,
        max_steps=defaults.max_steps,
        tests=tests,
    )
    return suite, ctx.warnings
