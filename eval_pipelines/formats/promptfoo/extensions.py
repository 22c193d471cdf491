"""promptfoo's ``extensions``: lifecycle hooks, run in the sandbox when the suite loads.

What promptfoo does (src/evaluatorHelpers.ts ``runExtensionHook``, src/evaluator.ts,
src/util/transform.ts; site/docs/configuration/reference.md "Extension hooks"):

* An entry is ``file://path.py:function`` or ``file://path.js[:function]`` (``.cjs``, ``.mjs``).
  A function named after a hook (``beforeAll``, ``beforeEach``, ``afterEach``, ``afterAll``) runs
  for that hook only and is called ``fn(context, {hookName})``; any other name (or none) is a
  generic handler, called for every hook as ``fn(hookName, context)``. A Python file without a
  function calls ``get_transform``; a JavaScript one calls the named export, else the module
  itself or its default export when that is a function. An entry without ``file://`` is read as
  inline JavaScript, so it is refused here; another file type is "Unsupported transform file format".
* ``beforeAll`` gets ``{suite}`` once before the eval; when it returns something, promptfoo takes
  back the suite's ``prompts``, ``providerPromptMap``, ``tests``, ``scenarios``, ``defaultTest``,
  ``nunjucksFilters``, ``derivedMetrics`` and ``redteam`` from it (``defaultTest.assert`` is made a
  list first so a hook can append to it).
* ``beforeEach`` gets ``{test}`` (defaultTest merged, one combination of the variables) before each
  prompt x provider x repeat of a test; a returned ``{test}`` replaces the test.
* ``afterEach`` gets ``{test, result}``; its returned ``namedScores`` and metadata are merged into the
  stored result. ``afterAll`` gets the results once the eval is stored; its return is ignored.

Here the hooks run when the suite loads, in :mod:`eval_pipelines.run.sandbox.runner` (an empty folder
holding only the hook's file, no secrets, no network, limits), their context and answer as JSON:
``beforeAll`` once (the tests, scenarios, defaultTest and derivedMetrics it returns are used; a
changed ``prompts``, ``providerPromptMap``, ``nunjucksFilters`` or ``redteam`` is refused), then
``beforeEach`` once per test and variable combination (its returned test is read and checked like
any test). Stored warnings say that they ran at load time and what they changed. ``afterEach``
and ``afterAll`` hooks are refused (they need the run's results; not done here); a generic
handler's calls for them are not made, which a stored warning says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_pipelines.run.sandbox.script_runner import node_runner
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.derived_metrics import parse_derived_metrics
from eval_pipelines.formats.promptfoo.pairing import prompt_raw
from eval_pipelines.formats.promptfoo.prompts.templates import Prompt, parse_script, read_structured, resolve_refs
from eval_pipelines.formats.promptfoo.scripts import (
    JS_SUFFIXES, PYTHON_SUFFIXES, TS_SUFFIXES, Script, call_script,
)
from eval_pipelines.formats.promptfoo.cases import RawTest, collect_raw_tests, merge_default, shapes_ok, var_combinations
from eval_pipelines.suite.source import Document

HOOK_NAMES = ("beforeAll", "beforeEach", "afterEach", "afterAll")
EXPECTED = "file://path.py:function or file://path.js[:function]"
# What promptfoo takes back from a beforeAll answer: used here, or refused when changed.
SUITE_USED = ("tests", "scenarios", "defaultTest", "derivedMetrics")
SUITE_REFUSED = ("prompts", "providerPromptMap", "nunjucksFilters", "redteam")
# transform.ts getJavascriptTransformFunction: the named export (an own function), else the module
# when it is a function, else its default export (a CommonJS module.exports is the ESM default).
JS_RUNNER = node_runner("""
    const has = (o, k) => o != null && Object.prototype.hasOwnProperty.call(o, k) && typeof o[k] === 'function';
    let fn;
    if (req.function && has(mod, req.function)) fn = mod[req.function];
    else if (req.function && has(mod.default, req.function)) fn = mod.default[req.function];
    else if (typeof mod.default === 'function') fn = mod.default;
    if (!fn) throw new Error(`${req.file} must export a function, have a default export as a function, `
                             + `or export the function "${req.function}"`);
    const result = await fn(...req.args);
    answer({result: result === undefined ? null : result});
""")


@dataclass(frozen=True)
class Extension:
    """One ``extensions`` entry: its script and the function called."""

    script: Script
    function: str | None
    index: int

    @property
    def hook(self) -> str | None:
        """The one hook it runs for (None: a generic handler, run for every hook)."""
        return self.function if self.function in HOOK_NAMES else None

    def runs_for(self, hook: str) -> bool:
        return self.hook in (None, hook)

    def args(self, hook: str, context: dict[str, Any]) -> list[Any]:
        return [context, {"hookName": hook}] if self.hook else [hook, context]

    def name(self) -> str:
        return f"extensions[{self.index}] ({self.script.ref})"


def _plain(value: Any) -> Any:
    """``value`` as the JSON the hook gets (YAML dates and the like as text)."""
    return json.loads(json.dumps(value, default=str))


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness, which promptfoo tests an answer with (an empty object is true)."""
    return value is not None and value is not False and value != 0 and value != ""


@dataclass
class Hooks:
    """The config's extensions and what running them changed (for the stored warnings)."""

    ctx: LoadContext
    doc: Document
    extensions: list[Extension]
    changed_tests: int = 0
    seen_tests: int = 0
    changed_fields: set[str] = field(default_factory=set)
    failed: bool = False  # beforeAll failed: beforeEach is not run (its one-line error is enough)

    @classmethod
    def parse(cls, ctx: LoadContext, doc: Document, raw: Any) -> Hooks:
        found: list[Extension] = []
        entries = raw if isinstance(raw, list) else []
        if raw is not None and not isinstance(raw, list):
            ctx.error(doc, ("extensions",), f"got {type(raw).__name__}", f"a list of {EXPECTED}")
        for i, entry in enumerate(entries):
            path = ("extensions", i)
            if not isinstance(entry, str) or not entry.startswith("file://"):
                shown = repr(entry) if isinstance(entry, str) else type(entry).__name__
                ctx.error(doc, path, f"extension {shown} is not a file:// reference (promptfoo runs a string "
                          "without file:// as inline JavaScript)", EXPECTED)
                continue
            named, function = entry.removeprefix("file://"), None
            if ":" in Path(named).name:
                named, function = named.rsplit(":", 1)
            if function in ("afterEach", "afterAll"):  # said whether or not the file is there
                ctx.error(doc, path, f"{function} hook {entry} is not run: promptfoo calls it with the run's "
                          "results (afterEach's returned namedScores and metadata change the stored result); "
                          "hooks run here only when the suite loads", "beforeAll or beforeEach hooks")
                continue
            if Path(named).suffix.lower() not in PYTHON_SUFFIXES + JS_SUFFIXES + TS_SUFFIXES:
                ctx.error(doc, path, f"extension file {Path(named).name} has an unsupported type", EXPECTED)
                continue
            script = parse_script(ctx, doc, path, entry)  # TypeScript, a glob, a missing file: one line
            if script is None:
                continue
            function = script.function or ("get_transform" if script.language == "python" else None)
            extension = Extension(script, function, i)
            found.append(extension)
            if extension.hook is None:
                ctx.warnings.append(f"{doc.file}: {extension.name()}: a handler for every hook; its beforeAll and "
                                    "beforeEach calls are made when the suite loads, its afterEach and afterAll "
                                    "calls (with the run's results) are not made")
        return cls(ctx, doc, found)

    def call(self, extension: Extension, hook: str, context: dict[str, Any],
             path: tuple[Any, ...]) -> tuple[bool, Any]:
        """Run one hook in the sandbox: (True, its answer) or (False, a one-line error recorded)."""
        return call_script(self.ctx, self.doc, path, extension.script, extension.function,
                           extension.args(hook, context), js_runner=JS_RUNNER)

    def before_all(self, prompts: list[Prompt], tests: list[RawTest], scenarios: Any, default: dict[str, Any],
                   derived: list[Any]) -> tuple[list[RawTest], Any, dict[str, Any], list[Any]]:
        """promptfoo's beforeAll: the tests, scenarios, defaultTest and derived metrics after it."""
        errors = len(self.ctx.errors)
        out = self._before_all(prompts, tests, scenarios, default, derived)
        self.failed = len(self.ctx.errors) > errors
        return out

    def _before_all(self, prompts: list[Prompt], tests: list[RawTest], scenarios: Any, default: dict[str, Any],
                    derived: list[Any]) -> tuple[list[RawTest], Any, dict[str, Any], list[Any]]:
        hooked = [e for e in self.extensions if e.runs_for("beforeAll")]
        if not hooked:
            return tests, scenarios, default, derived
        raw = self.doc.data
        default = {**default, "assert": default.get("assert") or []}
        parts = _plain({"tests": [t.data for t in tests], "scenarios": scenarios, "defaultTest": default,
                        "derivedMetrics": raw.get("derivedMetrics"), "prompts":
                        [{"raw": prompt_raw(p), "label": p.label} for p in prompts],
                        "providerPromptMap": None, "nunjucksFilters": raw.get("nunjucksFilters"),
                        "redteam": raw.get("redteam")})
        suite = {**_plain({k: v for k, v in raw.items() if k not in parts and k != "targets"}), **parts}
        for extension in hooked:
            path = ("extensions", extension.index)
            ok, answer = self.call(extension, "beforeAll", {"suite": suite}, path)
            if not ok:
                return tests, scenarios, default, derived
            if not _truthy(answer):
                continue
            if not isinstance(answer, dict) or not isinstance(answer.get("suite"), dict):
                self.ctx.error(self.doc, path, f"{extension.script.ref} returned {type(answer).__name__} to beforeAll",
                               "the context {suite} (or nothing)")
                return tests, scenarios, default, derived
            suite = {**suite, **{k: answer["suite"].get(k) for k in SUITE_USED + SUITE_REFUSED}}
        changed = [k for k in SUITE_USED + SUITE_REFUSED if suite[k] != parts[k]]
        for key in (k for k in changed if k in SUITE_REFUSED):
            self.ctx.error(self.doc, ("extensions",), f"beforeAll changed the suite's `{key}`, which is not "
                           "supported (prompts, providers and filters are read from the config)",
                           "a hook that changes tests, scenarios, defaultTest or derivedMetrics")
        if "tests" in changed:
            tests = self._tests(suite["tests"], tests)
        if "scenarios" in changed:
            scenarios = suite["scenarios"]
        if "defaultTest" in changed:
            new = suite["defaultTest"] or {}
            if not isinstance(new, dict):
                self.ctx.error(self.doc, ("extensions",), f"beforeAll returned a defaultTest of type "
                               f"{type(new).__name__}", "a test mapping")
            elif shapes_ok(self.ctx, self.doc, ("extensions", "beforeAll", "defaultTest"), new):
                default = new
        if "derivedMetrics" in changed:
            derived = parse_derived_metrics(self.ctx, self.doc, suite["derivedMetrics"])
        self.ctx.warnings.append(f"{self.doc.file}: extensions: beforeAll ran in the sandbox when the suite loaded "
                                 "(once per load; promptfoo runs it before each eval): "
                                 + (f"it changed {', '.join(changed)}" if changed else "it changed nothing"))
        return tests, scenarios, default, derived

    def _tests(self, returned: Any, before: list[RawTest]) -> list[RawTest]:
        """The returned tests: those equal to one before keep its place in the config (lines)."""
        if not isinstance(returned, list):
            returned = [] if returned is None else returned
            if not isinstance(returned, list):
                self.ctx.error(self.doc, ("extensions",), f"beforeAll returned tests of type {type(returned).__name__}",
                               "a list of tests")
                return before
        out: list[RawTest] = []
        originals = [_plain(t.data) for t in before]
        for j, test in enumerate(returned):
            if j < len(before) and test == originals[j]:
                out.append(before[j])
            else:
                out += collect_raw_tests(self.ctx, self.doc, ("extensions", "beforeAll", "tests", j), test, "promptfoo")
        return out

    def before_each(self, raw: RawTest, default: dict[str, Any]) -> list[tuple[RawTest, str]] | None:
        """promptfoo's beforeEach for one test: per variable combination, the test it returns
        (defaultTest merged, variables no longer expanded) and the case-id suffix (``-vN``).
        None: no beforeEach hook (the test is read as written). An empty list: an error."""
        hooked = [e for e in self.extensions if e.runs_for("beforeEach")]
        if not hooked or not isinstance(raw.data, dict):
            return None
        if self.failed:
            return []
        data = raw.data
        if isinstance(data.get("vars"), str):  # `vars: file://vars.yaml`: promptfoo reads it with the tests
            files = resolve_refs(self.ctx, raw.doc, raw.path + ("vars",), data["vars"])
            loaded = read_structured(self.ctx, raw.doc, raw.path + ("vars",), files[0]) if files else None
            if loaded is None:
                return []
            data = {**data, "vars": loaded.data}
        if not shapes_ok(self.ctx, raw.doc, raw.path, data):
            return []
        merged = merge_default(default, data)
        variables = merged.get("vars") or {}
        expand = not (merged.get("options") or {}).get("disableVarExpansion") and isinstance(variables, dict)
        combos = var_combinations(variables) if expand else [variables]
        out: list[tuple[RawTest, str]] = []
        for c, combo in enumerate(combos):
            before = _plain({**merged, "vars": combo})
            test = before
            for extension in hooked:
                ok, answer = self.call(extension, "beforeEach", {"test": test}, ("extensions", extension.index))
                if not ok:
                    return []
                if not _truthy(answer):
                    continue
                if not isinstance(answer, dict) or not isinstance(answer.get("test"), dict):
                    self.ctx.error(raw.doc, raw.path, f"{extension.script.ref} returned "
                                   f"{type(answer).__name__} to beforeEach", "the context {test} (or nothing)")
                    return []
                test = answer["test"]
            self.seen_tests += 1
            if test != before:
                self.changed_tests += 1
                self.changed_fields.update(k for k in set(test) | set(before) if test.get(k) != before.get(k))
            options = test.get("options")
            if options is None or isinstance(options, dict):  # promptfoo expanded the variables before the hook
                test = {**test, "options": {**(options or {}), "disableVarExpansion": True}}
            out.append((RawTest(test, raw.doc, raw.path, raw.extra), f"-v{c + 1}" if len(combos) > 1 else ""))
        return out

    def finish(self) -> None:
        """The stored warning on what beforeEach did (when a hook ran for it)."""
        if not self.seen_tests:
            return
        fields = f" ({', '.join(sorted(self.changed_fields))})" if self.changed_fields else ""
        self.ctx.warnings.append(f"{self.doc.file}: extensions: beforeEach ran in the sandbox when the suite loaded, "
                                 "once per test and variable combination (promptfoo calls it before each prompt, "
                                 f"provider and repeat of a test): it changed {self.changed_tests} of "
                                 f"{self.seen_tests}{fields}")
