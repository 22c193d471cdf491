"""AgentV v5 test fields beyond promptfoo's: ``criteria`` and the ``vars.`` namespace.

AgentV's loader tests (``applies per-test vars to suite and test input templates``, ``renders
assertion values and metrics with per-test vars``, ``applies namespaced vars with loops``) and its
validator test (``accepts vars without unknown-field warnings``: ``prompts`` with a test's
``criteria``) give two things the promptfoo loader does not do:

* ``tests[].criteria`` (and ``default_test.criteria``): the test's criteria, rendered with its
  vars (``Answers {{question}} correctly`` -> ``Answers What is the capital of France?
  correctly``), stored as the case's criteria; a test with criteria and no assertion is graded on
  them (``llm_judge``), as in the ``tests[].input`` shape. The value rides through the promptfoo
  loader in the test's metadata under ``CRITERIA_KEY`` and is taken out again here, rendered
  with each case's own (expanded) vars.
* ``{{ vars.name }}``: every name of a test's vars is also reachable under ``vars`` in prompts and
  assertion values (the promptfoo loader adds the namespace in the AgentV dialect); the copy is
  taken out of the stored ``metadata.vars`` here.

Tests read from a separate file (``tests: ./cases.jsonl``) keep promptfoo's fields only.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.agentv.vars import foreign_names, render_with_vars
from eval_pipelines.suite.models import Assertion, Suite
from eval_pipelines.suite.source import Document

CRITERIA_KEY = "__agentv_criteria__"
V5_TEST_KEYS = ("criteria",)  # test fields read here (the field contract lists them)


def _carried(test: Any) -> Any:
    if not isinstance(test, dict) or "criteria" not in test:
        return test
    metadata = test.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return test  # the loader refuses the metadata; `criteria` stays and is refused with it
    out = {k: v for k, v in test.items() if k != "criteria"}
    out["metadata"] = {**(metadata or {}), CRITERIA_KEY: test["criteria"]}
    return out


def carry_criteria(data: dict[str, Any]) -> dict[str, Any]:
    """``criteria`` of the inline tests and of ``default_test`` moved into their metadata."""
    out = dict(data)
    if isinstance(out.get("tests"), list):
        out["tests"] = [_carried(t) for t in out["tests"]]
    for key in ("default_test", "defaultTest"):
        if isinstance(out.get(key), dict):
            out[key] = _carried(out[key])
    return out


def finish_cases(doc: Document, suite: Suite) -> list[str]:
    """Per case: the criteria rendered and set; what still holds a template after the promptfoo
    loader rendered it (a var's own value, such as a chat ``input`` written with ``{{question}}``;
    ``expected_output``; an assertion's ``metric`` name) rendered with the case's vars, as AgentV
    renders them; the ``vars`` namespace copy dropped from metadata. Returns the warnings."""
    warnings: list[str] = []
    errors: list[SpecError] = []
    for case in suite.tests:
        variables = case.metadata.get("vars")
        if isinstance(variables, dict) and isinstance(variables.get("vars"), dict):
            own = {k: v for k, v in variables.items() if k != "vars"}
            if variables["vars"] == own:
                case.metadata["vars"] = variables = own
        variables = variables if isinstance(variables, dict) else {}
        missing: list[str] = []

        def render(text: str, field: str) -> str:
            foreign = foreign_names(text, variables)
            if foreign:  # `{{ env.NAME }}` and the like: left as written, and said so
                note = (f"{doc.file}: test {case.id}: {field}: not rendered: {', '.join(foreign)} "
                        "is not one of the test's vars (AgentV's {{ env.NAME }} is not interpolated in v5 suites here)")
                if note not in warnings:
                    warnings.append(note)
                return text
            rendered, absent, problems = render_with_vars(doc, ("tests", case.id, field), text, variables)
            errors.extend(SpecError(p.file, p.path, p.message, case.source_line, p.expected) for p in problems)
            missing.extend(n for n in absent if n not in missing)
            return rendered

        criteria = case.metadata.pop(CRITERIA_KEY, None)
        if criteria is not None:
            case.criteria = render(str(criteria), "criteria")
            if not case.assertions:
                case.assertions = [Assertion(type="llm_judge", name="criteria")]
        # only a var's own value written as a template is rendered again (AgentV renders it with the
        # vars); a prompt whose rendered text merely shows braces is left as it is
        if variables and _templated(json.dumps(variables, ensure_ascii=False, default=str)):
            for message in case.input:
                if isinstance(message.content, str) and _templated(message.content):
                    message.content = render(message.content, "input")
        # the promptfoo loader renders neither of these; AgentV renders both with the vars
        if isinstance(case.expected_output, str) and _templated(case.expected_output):
            case.expected_output = render(case.expected_output, "expected_output")
        for assertion in case.assertions:
            if assertion.name and _templated(assertion.name):
                assertion.name = render(assertion.name, "metric")
        if missing:
            warnings.append(f"{doc.file}: test {case.id}: {{{{ }}}} names not in the test's vars rendered "
                            f"empty: {', '.join(missing)}")
    if errors:
        raise SpecErrors(errors)
    return warnings


def _templated(text: str) -> bool:
    return "{{" in text or "{%" in text
