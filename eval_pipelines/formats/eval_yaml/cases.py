"""The tests of an eval spec YAML suite: each test mapping, and where tests come from.

``collect_tests`` reads ``tests`` given inline, as a dataset path, or as a
list mixing inline tests and ``file://`` references (globs allowed, nested
references followed, cycles and deep nesting refused). ``parse_test`` turns
one test mapping into a ``TestCase``: its ``input`` after the suite's and its
own ``assert`` plus the suite's (both unless ``skip_defaults``), AgentV's
``input_files`` (file parts before a string ``input``), the deprecated
test-level ``rubrics``, ``criteria`` alone meaning an ``llm_judge``, its
targets, and its ``tools`` merged over the suite's.

The suite-level fields those defaults come from are parsed in ``eval_yaml``.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.assertions import parse_assertion, pydantic_errors
from eval_pipelines.suite.errors import accepted_not_used, SpecErrors, format_path
from eval_pipelines.formats.agentv.parts import input_files_texts
from eval_pipelines.formats.datasets import read_test_rows
from eval_pipelines.formats.eval_yaml.fields import (
    EXECUTION_KEYS, LoadContext, assert_field, content_text, parse_assertions, parse_max_steps, parse_messages, parse_targets,
    parse_tools,
)
from eval_pipelines.suite.models import Assertion, Message, TestCase, ToolSpec, merge_tools
from eval_pipelines.suite.source import Document
from eval_pipelines.suite.tags import tag_list
from eval_pipelines.formats import compat

TEST_KEYS = {
    "id", "name", "description", "input", "criteria", "expected_outcome", "expected_output",
    "assert", "rubrics", "execution", "skip_defaults", "metadata", "tags", "category",
    "timeout_ms", "target", "conversation_id", "note", "tools", "max_steps", "assertions", "reference_answer",
    "input_files",
}
# Test fields AgentV reads (eval-validator.ts KNOWN_TEST_FIELDS, deprecated names, HEAD's `vars` and
# conversation fields when not applied) that we do not: refused by name (formats/compat.py).
AGENTV_TEST_READS = {"evaluators", "evaluator", "workspace", "suite", "depends_on", "on_dependency_failure",
                     "mode", "turns", "aggregation", "on_turn_failure", "window_size", "vars"}
MAX_INCLUDE_DEPTH = 16


@dataclass
class SuiteDefaults:
    """What every test inherits from the suite: ``input``, ``assert``, ``tools``, ``max_steps``, and
    ``input_files`` (the texts of AgentV's suite-level file parts, read once)."""

    input: list[Message]
    assertions: list[Assertion]
    tools: list[ToolSpec] = field(default_factory=list)
    max_steps: int | None = None
    input_files: list[str] | None = None


def parse_test(
    ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any, defaults: SuiteDefaults, index: int
) -> TestCase | None:
    """One test mapping as a ``TestCase``; None when it is invalid (the errors are in ``ctx``)."""
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a test mapping")
        return None
    compat.unknown_fields(ctx, doc, path, raw, TEST_KEYS, reads=AGENTV_TEST_READS)
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
    own_files = None
    if "input_files" in raw:
        own_files = input_files_texts(ctx, doc, path + ("input_files",), raw["input_files"])
        if own_files is None:
            return None
    key, raw_assert = assert_field(ctx, doc, path, raw)
    assertions = parse_assertions(ctx, doc, path + (key,), raw_assert)
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
    # AgentV: the test's own input_files win over the suite's; skip_defaults drops the suite's.
    files = own_files if own_files is not None else None if skip_defaults else defaults.input_files
    if files:
        if not isinstance(raw["input"], str):
            ctx.error(doc, path + ("input",), "input_files needs a string `input` (AgentV skips such a test)",
                      "a string (the text sent after the files)")
            return None
        messages = [Message(role="user", content="\n".join([*files, raw["input"]]))]
    if "workers" in execution:
        ctx.warnings.append(accepted_not_used(doc, path + ("execution", "workers"), (
            "workers is how many tests run at once: a suite setting (execution.workers), not a test's")))
    if "evaluators" in execution:
        ctx.warnings.append(f"{doc.file}: {format_path(path + ('execution', 'evaluators'))} is deprecated; "
                            "use `assert`")
        assertions = assertions + parse_assertions(ctx, doc, path + ("execution", "evaluators"),
                                                   execution["evaluators"])
    if not skip_defaults:
        assertions = assertions + defaults.assertions
    trials, cache = _test_execution(ctx, doc, path + ("execution",), execution)
    criteria_text = raw.get("criteria", raw.get("expected_outcome"))
    if not assertions and isinstance(criteria_text, str) and criteria_text.strip():
        # Seed 001 / AgentV: a test with only `criteria` is judged on them.
        assertions = [Assertion(type="llm_judge", name="criteria")]
    targets = parse_targets(ctx, doc, path + ("execution",), execution)
    if targets is None and "target" in raw:
        targets = parse_targets(ctx, doc, path, {"target": raw["target"]})
    criteria = raw.get("criteria", raw.get("expected_outcome"))
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        ctx.error(doc, path + ("metadata",), "invalid metadata", "a mapping")
        metadata = {}
    # AgentV's `note` and `conversation_id` are kept with the case (test_cases.metadata).
    metadata = {**metadata, **{k: raw[k] for k in ("note", "conversation_id") if raw.get(k) is not None}}
    own_tools = parse_tools(ctx, doc, path + ("tools",), raw.get("tools"))
    max_steps = parse_max_steps(ctx, doc, path + ("max_steps",), raw.get("max_steps"))
    expected = raw.get("expected_output")
    if "reference_answer" in raw:  # AgentV: the reference the judges compare with
        if expected is not None:
            ctx.error(doc, path + ("reference_answer",), "both `expected_output` and `reference_answer` given",
                      "one of them (both are the reference answer)")
        expected = raw["reference_answer"]
    if isinstance(expected, list) and expected and all(isinstance(m, dict) and "content" in m for m in expected):
        expected = "\n".join(content_text(m["content"]) for m in expected)
    try:
        return TestCase(
            id=str(test_id),
            name=raw.get("name"),
            description=raw.get("description"),
            input=([] if skip_defaults else defaults.input) + messages,  # AgentV skips the suite's input too
            expected_output=expected,
            criteria=None if criteria is None else str(criteria),
            assertions=assertions,
            targets=targets,
            timeout_ms=raw.get("timeout_ms"),
            trials=trials,
            cache=cache,
            tools=merge_tools(defaults.tools, own_tools),
            max_steps=max_steps or defaults.max_steps,
            category=raw.get("category") or metadata.get("category"),
            tags=tag_list(raw.get("tags")),
            metadata=metadata,
            source_file=str(doc.file),
            source_line=doc.line_of(path),
        )
    except ValidationError as exc:
        ctx.errors.extend(pydantic_errors(doc, path, exc))
        return None


def _test_execution(ctx: LoadContext, doc: Document, path: tuple[Any, ...],
                    execution: dict[str, Any]) -> tuple[int | None, bool | None]:
    """A test's own ``execution.trials`` (a count, or ``{count}``) and ``execution.cache``."""
    trials = execution.get("trials")
    if isinstance(trials, dict):
        extra = sorted(set(trials) - {"count"})
        if extra:
            ctx.error(doc, path + ("trials", extra[0]), f"{extra[0]!r} cannot be set per test",
                      "only `count`; strategy and cost_limit_usd are the suite's (execution.trials)")
        trials = trials.get("count")
    if trials is not None and (isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= 1000):
        ctx.error(doc, path + ("trials",), f"invalid trials {trials!r}", "an integer from 1 to 1000")
        trials = None
    cache = execution.get("cache")
    if cache is not None and not isinstance(cache, bool):
        ctx.error(doc, path + ("cache",), f"got {cache!r}", "true or false")
        cache = None
    return trials, cache


def _resolve_reference(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str) -> list[Path]:
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


def collect_tests(
    ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any, defaults: SuiteDefaults,
    stack: tuple[Path, ...], out: list[TestCase],
) -> None:
    """Append the tests of a ``tests`` value to ``out``; ``stack`` holds the files being read."""
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
            test = parse_test(ctx, doc, path + (i,), item, defaults, len(out))
            if test is not None:
                out.append(test)


def _include(
    ctx: LoadContext, doc: Document, path: tuple[Any, ...], file: Path, defaults: SuiteDefaults,
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
        test = parse_test(ctx, rows, (i,), item, defaults, len(out))
        if test is not None:
            out.append(test)
