"""The third-party field rule (formats/compat.py), on promptfoo, AgentV v5 and skill-creator files:
a field the tool ignores is a stored warning, a likely misspelling of a field it reads is refused
with "did you mean", a field it reads that we do not act on is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.formats.compat import likely_misspelling
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.suite.paths import PathPolicy

# The fields of issue 35's users' configs that promptfoo ignores (its zod objects strip them).
IGNORED = """\
version: 2
displayPrompt: true
prompts:
  - raw: 'Hi {{ name }}'
    label: greet
    provider: openai:gpt-4o-mini
providers: [echo]
evaluateOptions: {silent: true}
tests:
  - name: first
    vars: {name: Bob}
    options: {timeout: 30, evaluator: gpt-4}
    assert: [{type: contains, value: Bob}]
"""


def write(tmp_path: Path, text: str, name: str = "promptfooconfig.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def refusal(path: Path, **kwargs) -> str:
    with pytest.raises(SpecErrors) as caught:
        load_suite(path, **kwargs)
    lines = str(caught.value).splitlines()
    assert all("Traceback" not in line for line in lines)
    return lines[0]


def test_fields_promptfoo_ignores_are_stored_warnings_and_the_config_runs(tmp_path: Path) -> None:
    suite, warnings = load_suite(write(tmp_path, IGNORED))
    assert [c.input[0].content for c in suite.tests] == ["Hi Bob"]
    said = sorted(w.split(": ", 2)[1] for w in warnings if "promptfoo ignores this field too" in w)
    assert said == ["displayPrompt", "prompts[0].provider", "tests[0].name", "tests[0].options.evaluator",
                    "tests[0].options.timeout", "version"]
    assert any("evaluateOptions.silent: accepted but not used" in w for w in warnings)
    assert all(w.split(": ")[0].rsplit(":", 1)[1].isdigit() for w in warnings if "ignores this field" in w)  # file:line


@pytest.mark.parametrize(("body", "said"), [
    ("tests: [{vars: {q: x}, asserts: [{type: contains, value: x}]}]\n", "did you mean 'assert'?"),
    ("tests: [{vars: {q: x}, Assert: [{type: contains, value: x}]}]\n", "did you mean 'assert'?"),
    ("tests: [{vars: {q: x}, treshold: 0.5}]\n", "did you mean 'threshold'?"),
    ("defaultTest: {asert: [{type: contains, value: x}]}\ntests: [{vars: {q: x}}]\n", "did you mean 'assert'?"),
    ("tests: [{vars: {q: x}, assert: [{type: contains, vlaue: x}]}]\n", "did you mean 'value'?"),
])
def test_a_likely_misspelling_of_a_field_promptfoo_reads_is_refused(tmp_path: Path, body: str, said: str) -> None:
    line = refusal(write(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\n" + body))
    assert said in line and "promptfoo reads" in line


def test_a_field_promptfoo_reads_that_we_do_not_act_on_is_refused_by_name(tmp_path: Path) -> None:
    line = refusal(write(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\nevaluateOptions: {maxEvalTimeMs: 5}\n"
                                   "tests: [{vars: {q: x}}]\n"))
    assert "evaluateOptions.maxEvalTimeMs: promptfoo's field 'maxEvalTimeMs' is not supported" in line


def test_the_close_match_rule() -> None:
    reads = {"description", "vars", "assert", "options", "threshold", "metadata", "provider"}
    assert likely_misspelling("asserts", reads) == "assert"
    assert likely_misspelling("VARS", reads) == "vars"
    assert likely_misspelling("name", reads) is None
    assert likely_misspelling("version", reads) is None


def test_agentv_v5_files_follow_the_same_rule(tmp_path: Path) -> None:
    base = "name: s\nprompts: ['{{ q }}']\ntarget: default\ntests:\n  - id: a\n    vars: {q: x}\n"
    _, warnings = load_suite(write(tmp_path, base + "    owner: me\n", "suite.yaml"))
    assert any("tests[0].owner: AgentV ignores this field too" in w for w in warnings)
    assert "did you mean 'vars'?" in refusal(write(tmp_path, base + "    varss: {q: y}\n", "suite.yaml"))


def test_skill_creator_evals_json_follows_the_same_rule(tmp_path: Path) -> None:
    root = tmp_path / "s"
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    evals = root / "evals" / "evals.json"
    evals.write_text(json.dumps({"skill_name": "s", "evals": [
        {"id": 1, "prompt": "p", "expectations": ["x"], "weight": 2}]}))
    _, warnings = load_suite(evals, PathPolicy(allowed_roots=(root,)))
    assert any("evals[0].weight: skill-creator ignores this field too" in w for w in warnings)
    evals.write_text(json.dumps({"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "expectation": ["x"]}]}))
    assert "did you mean 'expectations'?" in refusal(evals, policy=PathPolicy(allowed_roots=(root,)))
