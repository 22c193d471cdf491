"""AgentV's ``tests[].vars`` in the ``tests[].input`` shape: per-test data for ``{{ name }}`` placeholders.

AgentV's example (``examples/features/test-vars-templating``, its README: "each test defines its
own ``vars`` object", "``{{question}}`` and dotted paths like ``{{expected.answer}}``", "shared
``input`` can reference per-test vars too", "separate from env interpolation") and its loader
tests (``applies per-test vars to suite and test input templates``, ``renders assertion values and
metrics with per-test vars``, ``applies per-test vars inside conversation turns``) give the rule
applied here, before the suite is read:

* the test's ``criteria`` (``expected_outcome``), ``input``, ``expected_output``
  (``reference_answer``), its assertions (a plain-string criterion; ``value``, ``metric``,
  ``name``, ``criteria``, ``rubric`` of a mapping) and its conversation ``turns`` are rendered
  with the test's vars, each name also reachable as ``vars.name`` (AgentV's later spelling);
* the suite-level ``input`` is rendered per test: when it holds a placeholder and a test has
  vars, it is prepended to each test's own input (rendered with that test's vars; a test with
  ``skip_defaults`` gets none, as before) instead of being shared;
* ``metadata`` (and every other field) is left as written.

Rendering is Nunjucks-like, through a sandboxed jinja2 environment (a template is untrusted
input); a value that is a mapping or a list prints as JSON, as promptfoo's prompts do. A name
the vars do not hold renders empty, as Nunjucks does; the names are stored as a warning
(``suites.warnings``), so a criterion that lost its words is visible.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

import jinja2
import jinja2.meta
import jinja2.sandbox

from eval_pipelines.suite.errors import SpecError, SpecErrors, format_path
from eval_pipelines.suite.source import Document

TEXT_FIELDS = ("criteria", "expected_outcome", "input", "expected_output", "reference_answer", "turns")
ASSERTION_LISTS = ("assert", "assertions")
ASSERTION_TEXT_KEYS = ("value", "metric", "name", "criteria", "rubric")


def _printed(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return value


_SEEN: ContextVar[list[str] | None] = ContextVar("agentv_vars_missing", default=None)


class _Missing(jinja2.Undefined):
    """Renders empty (Nunjucks' default) and records the name it stood for."""

    def __str__(self) -> str:
        seen = _SEEN.get()
        if seen is not None and self._undefined_name and self._undefined_name not in seen:
            seen.append(self._undefined_name)
        return ""


_ENV = jinja2.sandbox.SandboxedEnvironment(autoescape=False, keep_trailing_newline=True, undefined=_Missing,
                                           finalize=_printed)


def _has_template(text: str) -> bool:
    return "{{" in text or "{%" in text


class _Renderer:
    def __init__(self, doc: Document, variables: dict[str, Any]) -> None:
        self.doc = doc
        self.context = {**variables, "vars": variables}
        self.missing: list[str] = []
        self.errors: list[SpecError] = []

    def text(self, value: str, path: tuple[Any, ...]) -> str:
        if not _has_template(value):
            return value
        token = _SEEN.set(self.missing)
        try:
            return _ENV.from_string(value).render(**self.context)
        except jinja2.TemplateError as exc:
            self.errors.append(SpecError(str(self.doc.file), path, f"template does not render: {exc}",
                                         self.doc.line_of(path), "{{ name }} placeholders naming the test's vars"))
            return value
        finally:
            _SEEN.reset(token)

    def walk(self, value: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(value, str):
            return self.text(value, path)
        if isinstance(value, list):
            return [self.walk(v, path + (i,)) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: self.walk(v, path + (k,)) for k, v in value.items()}
        return value

    def assertion(self, item: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(item, str):
            return self.text(item, path)
        if not isinstance(item, dict):
            return item
        return {k: self.walk(v, path + (k,)) if k in ASSERTION_TEXT_KEYS else v for k, v in item.items()}


def _messages(value: Any) -> list[Any]:
    """An input in message-list form (AgentV's expandInputShorthand: a string is one user message)."""
    if isinstance(value, list):
        return list(value)
    return [{"role": "user", "content": value}]


def _skips_defaults(test: dict[str, Any]) -> bool:
    execution = test.get("execution")
    return bool(test.get("skip_defaults", execution.get("skip_defaults", False) if isinstance(execution, dict)
                else False))


def apply_test_vars(doc: Document) -> tuple[Document, list[str]]:
    """The document with every test's vars applied (see the module doc), and the warnings."""
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        return doc, []
    tests = data["tests"]
    if not any(isinstance(t, dict) and "vars" in t for t in tests):
        return doc, []
    suite_input = data.get("input")
    # input_files joins the files to a string input (agentv_parts): with them the suite input stays shared
    inline_suite_input = ("input" in data and "input_files" not in data
                          and not any(isinstance(t, dict) and "input_files" in t for t in tests)
                          and _has_template(json.dumps(suite_input, ensure_ascii=False)))
    errors: list[SpecError] = []
    warnings: list[str] = []
    if not inline_suite_input and "input" in data and _has_template(json.dumps(suite_input, ensure_ascii=False)):
        warnings.append(f"{doc.file}: input: the suite-level input is not rendered with the tests' vars "
                        "(input_files is used, which joins files to a string input); its placeholders are sent as written")
    out_tests: list[Any] = []
    for index, test in enumerate(tests):
        path = ("tests", index)
        if not isinstance(test, dict):
            out_tests.append(test)
            continue
        variables = test.get("vars", {})
        if not isinstance(variables, dict):
            errors.append(SpecError(str(doc.file), path + ("vars",), "invalid vars", doc.line_of(path + ("vars",)),
                                    "a mapping of names to values"))
            continue
        renderer = _Renderer(doc, variables)
        out = {k: v for k, v in test.items() if k != "vars"}
        for key in TEXT_FIELDS:
            if key in out:
                out[key] = renderer.walk(out[key], path + (key,))
        for key in ASSERTION_LISTS:
            if isinstance(out.get(key), list):
                out[key] = [renderer.assertion(a, path + (key, i)) for i, a in enumerate(out[key])]
        if inline_suite_input and not _skips_defaults(out) and "input" in out:
            shared = renderer.walk(suite_input, ("input",)) if "vars" in test else suite_input
            out["input"] = _messages(shared) + _messages(out["input"])
        errors.extend(renderer.errors)
        if renderer.missing:
            warnings.append(f"{doc.file}: {format_path(path)}: {{{{ }}}} names not in the test's vars "
                            f"rendered empty: {', '.join(renderer.missing)}")
        out_tests.append(out)
    if errors:
        raise SpecErrors(errors)
    out_data = {**data, "tests": out_tests}
    if inline_suite_input:
        out_data.pop("input")  # now part of each test's input, rendered for it
    return Document(doc.file, out_data, doc.lines), warnings


def foreign_names(text: str, variables: dict[str, Any]) -> list[str]:
    """The names a template uses that are neither the test's vars nor ``vars`` (``env``, say);
    a template that does not parse has none (rendering it reports the error)."""
    try:
        used = jinja2.meta.find_undeclared_variables(_ENV.parse(text))
    except jinja2.TemplateSyntaxError:
        return []
    return sorted(used - set(variables) - {"vars"})


def render_with_vars(doc: Document, path: tuple[Any, ...], text: str, variables: dict[str, Any]
                     ) -> tuple[str, list[str], list[SpecError]]:
    """One text rendered with a test's vars: (text, names missing, errors)."""
    renderer = _Renderer(doc, variables)
    return renderer.text(text, path), renderer.missing, renderer.errors
