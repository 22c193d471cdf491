"""Seed 003: eval-harness files.

Three shapes load here, all into the one internal model:

* a suite file, ``eval_suite: {name, config, evals: [{$ref: ...}], reporting}``
  (``$ref`` paths relative to the suite file, cycles refused), optionally with
  ``thresholds`` (``pass_at_1``, ``pass_hat_3``, ``required_pass_rate`` or an
  ``environment`` name from the seed's table);
* an eval file, ``schema_version`` + ``eval_type`` + ``metadata`` + ``config`` +
  ``test_cases`` (or the JSON regression form with ``baseline`` and ``test_case``);
* a list of ``capability_eval`` / ``regression_eval`` entries.

Each case's ``expected``/``expected_output`` and ``grader`` become assertions:
code graders (exact_match, regex, function_output, structural_match), model
graders, human graders, and the regression comparisons (structural, numeric,
exact, semantic) against the baseline captured in the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval_pipelines.suite.assertions import parse_assertion
from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.harness.graders import (
    check_comparison, check_current, check_expected, check_grader,
)
from eval_pipelines.formats.harness.layout import layout_thresholds
from eval_pipelines.formats.harness.suite import (
    SUITE_CONFIG_KEYS, HarnessContext as _Ctx, suite_config, suite_reporting, suite_thresholds,
)
from eval_pipelines.suite.models import (
    Assertion, Execution, Message, Reporting, Settings, Suite, TestCase, Trials,
)
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document, load_document, read_text
from eval_pipelines.suite.tags import tag_list

SUITE_KEYS = {"name", "version", "description", "config", "evals", "reporting", "thresholds", "environment",
              "blocking"}
# An eval file's `config` (seed 003 eval file example; `trials` for that file's cases).
EVAL_CONFIG_KEYS = {"timeout_seconds", "retries", "parallel", "trials"}
EVAL_KEYS = {"schema_version", "eval_type", "metadata", "config", "test_cases", "baseline", "test_case",
             "grader", "current", "comparison"}
ENTRY_KEYS = {"id", "name", "description", "category", "input", "expected_output", "expected", "grader",
              "metadata", "baseline_version", "baseline", "current", "comparison", "eval_type"}
MAX_REF_DEPTH = 16


def is_harness(data: Any) -> bool:
    if isinstance(data, dict):
        return "eval_suite" in data or "schema_version" in data or "eval_type" in data or (
            "test_cases" in data and "tests" not in data)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        first = data[0]
        return "grader" in first or "expected_output" in first and isinstance(first.get("expected_output"), dict) \
            or "baseline" in first or ("current" in first and "comparison" in first)
    return False


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


def _input_messages(ctx: _Ctx, doc: Document, path: tuple[Any, ...], raw: Any) -> list[Message] | None:
    if raw is None:
        ctx.error(doc, path, "required field is missing", "an input mapping with `content`")
        return None
    if not isinstance(raw, dict) or "content" not in raw:
        # The regression form's `current.input` is the request itself.
        return [Message(content=_text(raw))]
    content = raw["content"]
    if raw.get("type") == "file" and isinstance(content, str):
        file = ctx.policy.resolve(doc.file.parent / content, content)
        if not ctx.policy.check(file, doc, path + ("content",), ctx.errors):
            return None
        if not file.is_file():
            ctx.error(doc, path + ("content",), f"input file not found: {content}")
            return None
        try:
            content = read_text(file)
        except SpecErrors as exc:
            ctx.errors.extend(exc.errors)
            return None
    text = _text(content)
    if raw.get("context"):
        text += "\n\nContext:\n" + json.dumps(raw["context"], indent=2, ensure_ascii=False)
    return [Message(content=text)]


def _expected_assertions(expected: dict[str, Any], grader: dict[str, Any]) -> list[dict[str, Any]]:
    """Raw assertion items for one harness case (validated by the caller)."""
    kind = expected.get("type")
    value = expected.get("value")
    gtype = grader.get("type")
    config = dict(grader.get("config") or {})
    method = config.pop("method", None)
    items: list[dict[str, Any]] = []
    if gtype == "model":
        items.append({"type": "model", **config})
    elif gtype == "human":
        items.append({"type": "human", **config})
    elif method == "regex" or (method is None and kind == "pattern"):
        pattern = config.pop("pattern", value if kind == "pattern" else None)
        items.append({"type": "regex", "pattern": pattern, **config})
    elif method == "function_output" or kind == "functional":
        cases = (value or {}).get("test_cases", []) if isinstance(value, dict) else []
        items.append({
            "type": "function_output",
            "function_name": config.pop("function_name", None),
            "test_cases": [{"args": c.get("input", c.get("args", [])), "kwargs": c.get("kwargs", {}),
                            "expected": c.get("output", c.get("expected")),
                            **({"comparator": c["comparator"]} if "comparator" in c else {})}
                           for c in cases] or config.pop("test_cases", []),
            **config,
        })
    elif method == "structural_match":
        items.append({"type": "structural", **config})  # `strict` and the other options apply
    elif kind == "contains" or method == "contains":
        items.append({"type": "contains", "value": value, **config})
    elif kind == "semantic" and isinstance(value, dict) and ({"must_include", "must_not_include"} & value.keys()):
        items.append({"type": "must_include", **{k: value[k] for k in ("must_include", "must_not_include") if k in value}})
    elif kind == "semantic":
        items.append({"type": "semantic_sim", "value": _text(value)})
    elif kind == "exact" or method == "exact_match":
        options = config  # case_sensitive, trim_whitespace, normalize_newlines; `equals` refuses others
        alternatives = expected.get("alternatives") or []
        if alternatives:
            items.append({"type": "composite", "aggregator": "any", "assert": [
                {"type": "equals", "value": v, **options} for v in [value, *alternatives]]})
        else:
            items.append({"type": "equals", "value": value, **options})
    # A semantic expectation graded by a model gets both the lists and the judge.
    if gtype == "model" and kind == "semantic" and isinstance(value, dict) and (
            {"must_include", "must_not_include"} & value.keys()):
        items.append({"type": "must_include", **{k: value[k] for k in ("must_include", "must_not_include") if k in value}})
    return items


def _comparison_assertions(comparison: dict[str, Any], baseline: Any) -> list[dict[str, Any]]:
    kind = comparison.get("type", "exact")
    tolerance = comparison.get("tolerance") or {}
    options = comparison.get("options") or {}
    if kind == "structural":
        item: dict[str, Any] = {"type": "structural", "baseline": baseline}
        ignore = list(comparison.get("ignore_fields") or []) + list(options.get("ignore_fields") or [])
        if ignore:
            item["ignore_fields"] = ignore
        if options.get("ignore_values"):
            item["ignore_values"] = options["ignore_values"]
        if options.get("require_keys"):
            item["require_keys"] = options["require_keys"]
        for key in ("allow_additional_fields", "allow_field_reordering"):
            if key in tolerance:
                item[key] = tolerance[key]
        return [item]
    if kind == "numeric":
        return [{"type": "numeric", "baseline": baseline, "tolerance": tolerance}]
    if kind == "semantic":
        return [{"type": "semantic_sim", "value": _text(baseline)}]
    return [{"type": "equals", "value": _text(baseline)}]


class _Loader:
    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.tests: list[TestCase] = []
        # The current eval file's `config.trials` / `config.retries`, for its cases.
        self.file_trials: int | None = None
        self.file_retries: int | None = None

    def add_case(self, doc: Document, path: tuple[Any, ...], raw: Any, eval_type: str | None,
                 meta: dict[str, Any], inherited_timeout_s: float | None) -> None:
        ctx = self.ctx
        if not isinstance(raw, dict):
            ctx.error(doc, path, f"got {type(raw).__name__}", "a test case mapping")
            return
        ctx.unknown(doc, path, raw, ENTRY_KEYS)
        baseline_raw = raw.get("baseline")
        comparison = raw.get("comparison")
        current = raw.get("current") if isinstance(raw.get("current"), dict) else {}
        input_raw = raw.get("input", current.get("input"))
        messages = _input_messages(ctx, doc, path + ("input",), input_raw)
        if messages is None:
            return
        expected = raw.get("expected", raw.get("expected_output")) or {}
        grader = raw.get("grader") or {}
        if not isinstance(expected, dict):
            expected = {"type": "exact", "value": expected}
        if not isinstance(grader, dict):
            ctx.error(doc, path + ("grader",), "invalid grader", "a mapping with `type` and `config`")
            return
        checked = [check_grader(ctx, doc, path + ("grader",), grader),
                   check_expected(ctx, doc, path + ("expected" if "expected" in raw else "expected_output",),
                                  raw.get("expected", raw.get("expected_output"))),
                   check_current(ctx, doc, path + ("current",), raw.get("current")),
                   comparison is None or check_comparison(ctx, doc, path + ("comparison",), comparison)]
        if not all(checked):
            return
        items = _expected_assertions(expected, grader)
        baseline_value = None
        if isinstance(comparison, dict):
            if isinstance(baseline_raw, dict):
                baseline_value = baseline_raw.get("output", baseline_raw.get("response"))
            if baseline_value is None:
                ctx.error(doc, path + ("baseline",), "a comparison needs a baseline",
                          "baseline.output (or baseline.response)")
                return
            compared = _comparison_assertions(comparison, baseline_value)
            for item in [i for i in items if i["type"] == "structural"]:
                items.remove(item)
                if compared[0]["type"] == "structural":  # the grader's options (`strict`) join the comparison
                    compared[0].update({k: v for k, v in item.items() if k != "type"})
                else:
                    compared.append({**item, "baseline": baseline_value})
            items = compared + items
        if not items and grader.get("type") not in (None, "code"):
            ctx.error(doc, path + ("grader",), f"unsupported grader {grader.get('type')!r}", "code, model or human")
            return
        if not items and (expected or grader):
            # An expectation we cannot turn into a check must not silently become "not evaluated".
            ctx.error(doc, path + ("grader" if grader else "expected",),
                      f"cannot derive a check from expected type {expected.get('type')!r} and "
                      f"grader method {(grader.get('config') or {}).get('method')!r}",
                      "expected.type exact/contains/pattern/semantic/functional or a grader method "
                      "exact_match/regex/function_output/structural_match")
            return
        assertions: list[Assertion] = []
        for i, item in enumerate(items):
            where = path + (("comparison",) if comparison and i == 0 else
                            ("grader", "config") if grader.get("config") else ("grader",) if grader else ("expected",))
            parsed = parse_assertion(item, doc, where, ctx.errors)
            if parsed is not None:
                assertions.append(parsed)
        metadata = dict(raw.get("metadata") or {})
        timeout_s = metadata.get("timeout_seconds", inherited_timeout_s)
        eval_type = eval_type or ("regression" if comparison else "capability")
        category = raw.get("category") or meta.get("category") or eval_type
        if raw.get("baseline_version") is not None:
            metadata["baseline_version"] = str(raw["baseline_version"])
        if isinstance(baseline_raw, dict):
            extra = {k: v for k, v in baseline_raw.items() if k not in ("output", "response")}
            if extra:
                metadata["baseline"] = extra
        if current.get("execution") is not None:
            metadata["execution"] = current["execution"]
        if isinstance(raw.get("input"), dict) and raw["input"].get("type"):
            metadata["input_type"] = raw["input"]["type"]
        retries = self.file_retries
        if "retries" in metadata:  # seed 003 metadata.retries: re-runs of this case when it fails
            retries = ctx.count(doc, path + ("metadata", "retries"), metadata["retries"], 0, 20)
        weight = metadata.get("weight", meta.get("weight"))
        if isinstance(weight, (int, float)) and not isinstance(weight, bool):
            for assertion in assertions:
                assertion.weight = float(weight)
        test_id = raw.get("id") or f"{meta.get('id', doc.file.stem)}-{len(self.tests) + 1}"
        self.tests.append(TestCase(
            id=str(test_id),
            name=raw.get("name"),
            description=raw.get("description"),
            input=messages,
            expected_output=baseline_value if baseline_value is not None else expected.get("value"),
            assertions=assertions,
            timeout_ms=int(float(timeout_s) * 1000) if isinstance(timeout_s, (int, float)) else None,
            trials=self.file_trials,
            retries=retries,
            category=category,
            tags=tag_list(metadata.get("tags") or meta.get("tags")),
            metadata={**{k: v for k, v in meta.items() if k not in ("tags",)}, **metadata,
                      "eval_type": eval_type,
                      "grader": grader.get("type", "code")},
            source_file=str(doc.file),
            source_line=doc.line_of(path),
        ))

    def load_eval_file(self, doc: Document, path: tuple[Any, ...] = ()) -> None:
        ctx = self.ctx
        data = doc.data
        self.file_retries = self.file_trials = None  # each file's config is its own
        if isinstance(data, list):
            for i, entry in enumerate(data):
                self.add_case(doc, path + (i,), entry, None, {}, None)
            return
        if not isinstance(data, dict):
            ctx.error(doc, path, f"top level is {type(data).__name__}", "an eval mapping or a list of evals")
            return
        ctx.unknown(doc, path, data, EVAL_KEYS)
        eval_type = data.get("eval_type")
        if eval_type not in (None, "capability", "regression"):
            ctx.error(doc, path + ("eval_type",), f"unknown eval_type {eval_type!r}", "capability or regression")
        meta = data.get("metadata") or {}
        config = ctx.config(doc, path + ("config",), data.get("config"), EVAL_CONFIG_KEYS)
        if "retries" in config:  # re-runs of a failing case of this file
            self.file_retries = ctx.count(doc, path + ("config", "retries"), config["retries"], 0, 20)
        if "trials" in config:
            self.file_trials = ctx.count(doc, path + ("config", "trials"), config["trials"], 1, 1000)
        if config.get("parallel") is False:
            ctx.settings["max_concurrency"] = 1  # cases run one at a time
        timeout_s = config.get("timeout_seconds")
        if "test_cases" in data:
            cases = data["test_cases"]
            if not isinstance(cases, list) or not cases:
                ctx.error(doc, path + ("test_cases",), "no test cases", "a non-empty list")
                return
            for i, raw in enumerate(cases):
                self.add_case(doc, path + ("test_cases", i), raw, eval_type, meta, timeout_s)
        elif "test_case" in data:
            # The JSON regression form: one case with the baseline at the top level.
            entry = dict(data["test_case"] or {})
            entry.setdefault("id", meta.get("id"))
            entry.setdefault("name", meta.get("name"))
            entry["baseline"] = {"output": (data.get("baseline") or {}).get(
                "response", (data.get("baseline") or {}).get("output"))}
            if "grader" in data and "grader" not in entry:
                # With a comparison too: the grader's config (`strict`) shapes the structural match.
                if not check_grader(ctx, doc, ("grader",), data["grader"]):
                    return
                entry["grader"] = data["grader"]
            self.add_case(doc, path + ("test_case",), entry, eval_type or "regression", meta, timeout_s)
        else:
            ctx.error(doc, path + ("test_cases",), "required field is missing", "test_cases or test_case")


def load_harness(doc: Document, policy: PathPolicy) -> tuple[Suite, list[str]]:
    ctx = _Ctx(policy)
    loader = _Loader(ctx)
    data = doc.data
    name = doc.file.stem
    description = None
    version = None
    thresholds: dict[str, float] = {}
    trials = 1
    reporting: Reporting | None = None
    blocking = False
    if isinstance(data, dict) and "eval_suite" in data:
        suite_raw = data["eval_suite"]
        if not isinstance(suite_raw, dict):
            raise SpecErrors.single(doc.file, "invalid eval_suite", path=("eval_suite",), line=doc.line_of(("eval_suite",)))
        ctx.unknown(doc, ("eval_suite",), suite_raw, SUITE_KEYS)
        name = str(suite_raw.get("name") or name)
        blocking = suite_raw.get("blocking") is True
        description = suite_raw.get("description")
        version = None if suite_raw.get("version") is None else str(suite_raw["version"])
        config = ctx.config(doc, ("eval_suite", "config"), suite_raw.get("config"), SUITE_CONFIG_KEYS)
        suite_settings, trials = suite_config(ctx, doc, config)
        reporting = suite_reporting(ctx, doc, suite_raw.get("reporting"))
        # Seed 003's layout: config/thresholds.yaml beside the suite (its own `thresholds` win).
        layout = layout_thresholds(ctx, doc, suite_raw.get("environment"))
        own = suite_raw.get("thresholds")
        thresholds, trials = suite_thresholds(
            ctx, doc, {**suite_raw, "thresholds": layout | own if layout and isinstance(own, dict) else own or layout},
            trials)
        evals = suite_raw.get("evals")
        if not isinstance(evals, list) or not evals:
            ctx.error(doc, ("eval_suite", "evals"), "no evals", "a list of {$ref: path} or inline evals")
            evals = []
        for i, entry in enumerate(evals):
            path = ("eval_suite", "evals", i)
            if isinstance(entry, dict) and "$ref" in entry:
                _follow_ref(ctx, loader, doc, path, entry["$ref"], (doc.file.resolve(),))
            else:
                loader.add_case(doc, path, entry, None, {}, None)
        ctx.settings.update(suite_settings)  # the suite's config wins over its eval files
    else:
        loader.load_eval_file(doc)
        if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
            name = str(data["metadata"].get("name") or data["metadata"].get("id") or name)
            description = data["metadata"].get("description")
    seen: dict[str, int] = {}
    for position, test in enumerate(loader.tests):
        if test.id in seen:
            ctx.errors.append(SpecError(test.source_file or str(doc.file), ("test_cases", position, "id"),
                                        f"duplicate test id {test.id!r}", test.source_line))
        seen.setdefault(test.id, position)
    if not loader.tests and not ctx.errors:
        ctx.error(doc, (), "no test cases found", "test_cases, test_case or evals")
    if ctx.errors:
        raise SpecErrors(ctx.errors)
    settings = Settings(**ctx.settings)
    suite = Suite(name=name, description=description, version=version, format="harness",
                  source_file=str(doc.file), settings=settings, thresholds=thresholds, reporting=reporting,
                  execution=Execution(trials=Trials(count=trials)),
                  blocking=blocking,
                  tests=loader.tests)
    return suite, ctx.warnings


def _follow_ref(ctx: _Ctx, loader: _Loader, doc: Document, path: tuple[Any, ...], ref: Any,
                stack: tuple[Path, ...]) -> None:
    if not isinstance(ref, str) or not ref:
        ctx.error(doc, path + ("$ref",), "invalid $ref", "a path relative to the suite file")
        return
    if ref.startswith(("http://", "https://")):
        ctx.error(doc, path + ("$ref",), f"remote $ref {ref!r} is not fetched", "a local file path")
        return
    file = ctx.policy.resolve(doc.file.parent / ref, ref)
    if not ctx.policy.check(file, doc, path + ("$ref",), ctx.errors):
        return
    if file in stack:
        ctx.error(doc, path + ("$ref",), "$ref cycle: " + " -> ".join(p.name for p in (*stack, file)))
        return
    if len(stack) > MAX_REF_DEPTH:
        ctx.error(doc, path + ("$ref",), f"$ref nesting deeper than {MAX_REF_DEPTH}")
        return
    if not file.is_file():
        ctx.error(doc, path + ("$ref",), f"file not found: {ref}")
        return
    try:
        target = load_document(file)
    except SpecErrors as exc:
        ctx.errors.extend(exc.errors)
        return
    if isinstance(target.data, dict) and "eval_suite" in target.data:
        nested = target.data["eval_suite"].get("evals") if isinstance(target.data["eval_suite"], dict) else None
        for i, entry in enumerate(nested or []):
            if isinstance(entry, dict) and "$ref" in entry:
                _follow_ref(ctx, loader, target, ("eval_suite", "evals", i), entry["$ref"], (*stack, file))
        return
    loader.load_eval_file(target)
