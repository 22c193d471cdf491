"""The field contract: every field a suite can hold is honoured, refused, or warned about.

``accepted_fields()`` enumerates what the loaders accept: the exported eval
suite JSON Schema (``suite/schema_export.py``: suite, test, execution, workspace,
settings, tools and every assertion type's parameters) and the key sets each
loader checks unknown fields against (harness, tests.json v1/v2, prompt modes,
promptfoo configs and their CSV columns, AgentV v5, skill-creator evals.json).

``field_contract.yaml`` (beside this file) is the reviewable registry: for each
field, one of

* ``effect: <test>``  - a test that shows the field's effect on stored rows (or on
  what the run sent or wrote),
* ``refused: <test>`` - a test that shows a clear one-line refusal,
* ``warned: <test>``  - a test that shows the stored "accepted, not used" warning,

optionally with a ``note``. The tests below fail when a field the loaders
accept has no entry (a field added later without evidence fails CI), when an
entry names a field no loader accepts any more, or when a named test does not
exist.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_pipelines.formats.eval_yaml import loader as eval_yaml

from eval_pipelines.formats.eval_yaml import cases as eval_yaml_cases

from eval_pipelines.formats.eval_yaml import fields as eval_yaml_fields

from eval_pipelines.formats.harness import loader as harness

from eval_pipelines.formats.harness import suite as harness_suite
from eval_pipelines.formats.harness import graders as harness_graders
from eval_pipelines.formats.harness import layout as harness_layout
from eval_pipelines.grading.graders.rubrics import RubricItem
from eval_pipelines.formats.agentv import head as agentv_head
from eval_pipelines.formats.agentv import v5 as agentv_v5
from eval_pipelines.formats.agentv import v5_tests as agentv_v5_tests
from eval_pipelines.formats.prompt_modes import loader as prompt_modes
from eval_pipelines.formats.promptfoo import config as promptfoo
from eval_pipelines.formats.promptfoo.prompts import templates as promptfoo_prompts
from eval_pipelines.formats.promptfoo import providers as promptfoo_providers
from eval_pipelines.formats.promptfoo import sidecars as promptfoo_sidecars
from eval_pipelines.formats.promptfoo import cases as promptfoo_tests
from eval_pipelines.formats.promptfoo.assertions import vocabulary as promptfoo_vocabulary
from eval_pipelines.formats.skills import evals_json as skill_evals_json
from eval_pipelines.formats.skill_tests import loader as skill_tests
from eval_pipelines.suite.models import RegressionSettings, Reporting, Settings, Workspace, WorkspaceScript
from eval_pipelines.suite.schema_export import COMMON_ASSERT_FIELDS, eval_suite_schema
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.source import Document

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = Path(__file__).with_name("field_contract.yaml")
KINDS = ("effect", "refused", "warned")


def _props(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties", {}))


def _eval_yaml_fields() -> set[str]:
    schema = eval_suite_schema()
    defs = schema["$defs"]
    suite = schema["properties"]
    fields = {f"eval-yaml: {k}" for k in _props(schema) | eval_yaml.SUITE_KEYS}
    execution = _props(suite["execution"]) | eval_yaml_fields.EXECUTION_KEYS
    fields |= {f"eval-yaml: execution.{k}" for k in execution}
    trials = next(v for v in suite["execution"]["properties"]["trials"]["anyOf"] if v.get("type") == "object")
    fields |= {f"eval-yaml: execution.trials.{k}" for k in _props(trials) | eval_yaml.TRIALS_KEYS}
    fields |= {f"eval-yaml: tests[].{k}" for k in _props(defs["test"]) | eval_yaml_cases.TEST_KEYS}
    fields |= {f"eval-yaml: tests[].execution.{k}" for k in execution}
    fields |= {f"eval-yaml: settings.{k}" for k in _props(suite["settings"]) | set(Settings.model_fields)}
    fields |= {f"eval-yaml: regression.{k}" for k in _props(suite["regression"]) | set(RegressionSettings.model_fields)}
    fields |= {f"eval-yaml: workspace.{k}" for k in _props(suite["workspace"]) | set(Workspace.model_fields)}
    for step in ("setup", "teardown"):
        keys = _props(suite["workspace"]["properties"][step]) | set(WorkspaceScript.model_fields)
        fields |= {f"eval-yaml: workspace.{step}.{k}" for k in keys}
    tool = _props(defs["tool"]) | eval_yaml_fields.TOOL_KEYS
    canned = _props(defs["tool"]["properties"]["results"]["items"]) | eval_yaml_fields.CANNED_RESULT_KEYS
    for where in ("tools[]", "tests[].tools[]"):
        fields |= {f"eval-yaml: {where}.{k}" for k in tool}
        fields |= {f"eval-yaml: {where}.results[].{k}" for k in canned}
    fields |= {f"assert: {k}" for k in COMMON_ASSERT_FIELDS}
    fields |= {f"eval-yaml: {k}" for k in agentv_head.HEAD_SUITE_KEYS}  # AgentV HEAD's later names
    fields |= {f"eval-yaml: tests[].assert[].{k}" for k in agentv_head.HEAD_ASSERTION_KEYS}
    fields |= {f"eval-yaml: tests[].{k}" for k in agentv_head.HEAD_TEST_KEYS}
    # a rubric criterion's fields (AgentV's rubric items: HEAD added `operator`)
    fields |= {f"assert: rubrics.criteria[].{k}" for k in RubricItem.model_fields}
    for variant in defs["assertion"]["oneOf"]:
        fields |= {f"assert: {variant['title']}.{k}" for k in _props(variant) if k not in COMMON_ASSERT_FIELDS}
    return fields


def _harness_fields() -> set[str]:
    fields = {f"harness: eval_suite.{k}" for k in harness.SUITE_KEYS}
    fields |= {f"harness: eval_suite.config.{k}" for k in harness_suite.SUITE_CONFIG_KEYS}
    fields |= {f"harness: eval_suite.reporting.{k}" for k in Reporting.model_fields}
    fields |= {f"harness: eval file.{k}" for k in harness.EVAL_KEYS}
    fields |= {f"harness: eval file.config.{k}" for k in harness.EVAL_CONFIG_KEYS}
    fields |= {f"harness: test case.{k}" for k in harness.ENTRY_KEYS}
    return fields


def _skill_tests_fields() -> set[str]:
    fields = {f"tests.json v1: [].{k}" for k in skill_tests.V1_KEYS}
    fields |= {f"tests.json: {k}" for k in skill_tests.V2_KEYS}
    fields |= {f"tests.json: settings.{k}" for k in skill_tests.SETTINGS_KEYS}
    fields |= {f"tests.json: setup.{k}" for k in skill_tests.SETUP_KEYS}
    fields |= {f"tests.json: teardown.{k}" for k in skill_tests.TEARDOWN_KEYS}
    fields |= {f"tests.json: suites[].{k}" for k in skill_tests.SUITE_GROUP_KEYS}
    fields |= {f"tests.json: testCases[].{k}" for k in skill_tests.CASE_KEYS}
    fields |= {f"tests.json: testCases[].input.{k}" for k in skill_tests.INPUT_KEYS}
    fields |= {f"tests.json: testCases[].expected.{k}" for k in skill_tests.EXPECTED_KEYS}
    fields |= {f"tests.json: testCases[].evaluation.{k}" for k in skill_tests.EVALUATION_KEYS}
    return fields


def _prompt_fields() -> set[str]:
    fields = {f"prompt: {k}" for k in prompt_modes.PROMPT_KEYS}
    return fields | {f"prompt: testCases[].{k}" for k in prompt_modes.CASE_KEYS}


def _promptfoo_fields() -> set[str]:
    fields = {f"promptfoo: {k}" for k in promptfoo.SUITE_KEYS}
    fields |= {f"promptfoo: evaluateOptions.{k}" for k in promptfoo.EVALUATE_KEYS}
    fields |= {f"promptfoo: prompts[].{k}" for k in promptfoo_prompts.PROMPT_KEYS}
    fields |= {f"promptfoo: providers[].{k}" for k in promptfoo_providers.PROVIDER_KEYS}
    fields |= {f"promptfoo: providers[].config.{k}" for k in promptfoo_providers.OPENAI_CONFIG_APPLIED}
    fields |= {f"promptfoo: tests[].{k}" for k in promptfoo.TEST_KEYS}
    fields |= {f"promptfoo: tests[].options.{k}" for k in promptfoo.OPTION_KEYS}
    fields |= {f"promptfoo: tests[].assert[].{k}" for k in promptfoo_vocabulary.COMMON}
    fields |= {f"promptfoo: scenarios[].{k}" for k in promptfoo_tests.SCENARIO_KEYS}
    fields |= {f"promptfoo: tests[] {{path, config}} entry .{k}" for k in promptfoo_tests.TEST_FILE_ENTRY_KEYS}
    fields |= {f"promptfoo: prompt CSV column {k}" for k in promptfoo_prompts.PROMPT_CSV_COLUMNS}
    fields |= {f"promptfoo: tracing.{k}" for k in promptfoo_sidecars.TRACING_KEYS} | {
        "promptfoo: tracing.otlp.http", "promptfoo: tracing.otlp.grpc"}
    fields |= {f"promptfoo: tracing.otlp.http.{k}" for k in promptfoo_sidecars.HTTP_KEYS}
    return fields | {f"promptfoo: CSV column {k}" for k in promptfoo_tests.CSV_COLUMNS}


def _agentv_v5_fields() -> set[str]:
    """AgentV v5 is read by the promptfoo loader under its own names: what it adds or renames
    is listed here; the fields it shares with promptfoo share their evidence."""
    fields = {f"agentv-v5: {k}" for k in agentv_v5.SUITE_KEYS}
    fields |= {f"agentv-v5: environment.{k}" for k in agentv_v5.ENVIRONMENT_KEYS}
    fields |= {f"agentv-v5: workspace.{k}" for k in agentv_v5.WORKSPACE_KEYS}
    fields |= {f"agentv-v5: evaluate_options.{k}" for k in promptfoo.AGENTV_EVALUATE_NAMES}
    fields |= {f"agentv-v5: tests[].{k}" for k in promptfoo.AGENTV_TEST_KEYS}
    fields |= {f"agentv-v5: tests[].{k}" for k in agentv_v5_tests.V5_TEST_KEYS}
    fields |= {f"agentv-v5: tests[].execution.{k}" for k in promptfoo.AGENTV_EXECUTION_KEYS}
    fields |= {f"agentv-v5: tests[].options.{k}" for k in promptfoo.AGENTV_OPTION_NAMES}
    own = promptfoo_vocabulary.AGENTV_COMMON - promptfoo_vocabulary.COMMON | promptfoo_vocabulary.SCRIPT_KEYS
    return fields | {f"agentv-v5: tests[].assert[].{k}" for k in own}


def _skill_evals_fields() -> set[str]:
    fields = {f"evals.json: {k}" for k in skill_evals_json.TOP_KEYS}
    keys = skill_evals_json.EVAL_KEYS | skill_evals_json.read_as.KEYS  # read_as: other keys read as skill-creator's
    return fields | {f"evals.json: evals[].{k}" for k in keys}


def _weight_keys() -> list[str]:
    """The names `evaluation.weights` may use: those of the assertions a hybrid case with every
    expectation gets (read from the loader, so a new strategy's name needs evidence too)."""
    case = {"id": "c", "name": "n", "input": {"prompt": "p"}, "evaluation": {"strategy": "hybrid"},
            "expected": {"output": "o", "patterns": ["o"], "jsonSchema": {}, "semanticThreshold": 0.5,
                         "rubric": "r", "customScript": "c.py"}}
    config = {"version": "2.0", "profile": "deterministic", "testCases": [case]}
    suite, _ = skill_tests.load_skill_tests(Document(Path("eval/tests.json"), config))
    return [a.name for a in suite.tests[0].assertions if a.name]


def _nested_fields() -> set[str]:
    """Issue 30: names inside a value that a loader used to accept and then drop (hybrid weights
    under any key, an unknown grader type graded as `equals`, `strict`, `current.execution`,
    seed 003's config/ files). Each accepted name needs evidence like a field; each position
    also has a probe below showing that a name it does not use is refused."""
    case = "harness: test case"
    fields = {f"{case}.grader.{k}" for k in harness_graders.GRADER_KEYS}
    fields |= {f"{case}.grader.type: {t}" for t in harness_graders.GRADER_TYPES}
    fields |= {f"{case}.grader.config.method: {m}" for m in harness_graders.CODE_METHODS}
    fields |= {f"{case}.expected.{k}" for k in harness_graders.EXPECTED_KEYS}
    fields |= {f"{case}.expected.type: {t}" for t in harness_graders.EXPECTED_TYPES}
    fields |= {f"{case}.comparison.{k}" for k in harness_graders.COMPARISON_KEYS}
    fields |= {f"{case}.comparison.type: {t}" for t in harness_graders.COMPARISON_TYPES}
    fields |= {f"{case}.comparison.options.{k}" for k in harness_graders.COMPARISON_OPTION_KEYS}
    fields |= {f"{case}.comparison.tolerance.{k}" for k in harness_graders.STRUCTURAL_TOLERANCE_KEYS}
    fields |= {f"{case}.current.{k}" for k in harness_graders.CURRENT_KEYS}
    fields |= {f"harness: suite folder {'/'.join(f)}" for f in (harness_layout.THRESHOLDS_FILE,
                                                                 harness_layout.GRADERS_FILE)}
    return fields | {f"tests.json: testCases[].evaluation.weights.{n}" for n in _weight_keys()}


def accepted_fields() -> set[str]:
    """Every field a suite file can hold, as ``"<format>: <path>"``."""
    return (_eval_yaml_fields() | _harness_fields() | _skill_tests_fields() | _prompt_fields()
            | _promptfoo_fields() | _agentv_v5_fields() | _skill_evals_fields() | _nested_fields())


@lru_cache(maxsize=1)
def registry() -> dict[str, dict[str, str]]:
    data = yaml.safe_load(REGISTRY.read_text(encoding="utf-8"))
    return {str(k): v for k, v in (data or {}).items()}


@lru_cache(maxsize=None)
def _test_names(file: str) -> frozenset[str]:
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    return frozenset(n.name for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_"))


def test_every_accepted_field_is_honoured_refused_or_warned() -> None:
    missing = sorted(accepted_fields() - registry().keys())
    assert not missing, (
        "fields the loaders accept without evidence in tests/formats/field_contract.yaml (add a test that shows "
        "the effect on stored rows, a refusal, or a stored 'accepted, not used' warning, and name it there):\n"
        + "\n".join(missing))


def test_the_registry_names_only_accepted_fields() -> None:
    stale = sorted(registry().keys() - accepted_fields())
    assert not stale, "entries for fields no loader accepts any more:\n" + "\n".join(stale)


def test_every_entry_names_one_existing_test() -> None:
    problems = []
    for field, entry in registry().items():
        kinds = [k for k in KINDS if k in (entry or {})]
        if len(kinds) != 1 or set(entry) - {*KINDS, "note"}:
            problems.append(f"{field}: needs exactly one of {KINDS} (and an optional note), got {entry!r}")
            continue
        node = entry[kinds[0]]
        file, _, name = str(node).partition("::")
        if not (ROOT / file).is_file() or name not in _test_names(file):
            problems.append(f"{field}: {node} does not exist")
    assert not problems, "\n".join(problems)


def test_a_field_added_without_evidence_is_caught(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(eval_yaml_cases, "TEST_KEYS", eval_yaml_cases.TEST_KEYS | {"brand_new_field"})
    monkeypatch.setattr(harness_suite, "SUITE_CONFIG_KEYS", harness_suite.SUITE_CONFIG_KEYS | {"warp_speed"})
    monkeypatch.setattr(promptfoo, "OPTION_KEYS", promptfoo.OPTION_KEYS | {"turbo"})
    monkeypatch.setattr(agentv_v5, "SUITE_KEYS", agentv_v5.SUITE_KEYS | {"owner"})
    monkeypatch.setattr(skill_evals_json, "EVAL_KEYS", skill_evals_json.EVAL_KEYS | {"weight"})
    # Issue 30: a grader type or method accepted without evidence (it used to become `equals`).
    monkeypatch.setattr(harness_graders, "GRADER_TYPES", (*harness_graders.GRADER_TYPES, "robot"))
    monkeypatch.setattr(harness_graders, "CODE_METHODS", (*harness_graders.CODE_METHODS, "fuzzy_match"))
    assert {"eval-yaml: tests[].brand_new_field", "harness: eval_suite.config.warp_speed",
            "promptfoo: tests[].options.turbo", "agentv-v5: owner", "evals.json: evals[].weight",
            "harness: test case.grader.type: robot", "harness: test case.grader.config.method: fuzzy_match"} <= (
        accepted_fields() - registry().keys())


def test_the_exported_schema_knows_every_eval_yaml_key() -> None:
    """The schema editors validate with must not reject a field the loader accepts."""
    schema = eval_suite_schema()
    assert eval_yaml.SUITE_KEYS <= _props(schema)
    assert eval_yaml_cases.TEST_KEYS <= _props(schema["$defs"]["test"])
    assert eval_yaml_fields.EXECUTION_KEYS <= _props(schema["properties"]["execution"])
    assert set(Settings.model_fields) <= _props(schema["properties"]["settings"])
    assert set(Workspace.model_fields) <= _props(schema["properties"]["workspace"])


# ---- probes: a name a position does not use is refused, never accepted and dropped ------------

GRADED_CASE = "- id: g\n  input: {content: a}\n  expected: {type: exact, value: a}\n  grader: %s\n"
COMPARED_CASE = "- id: r\n  baseline: {output: {a: 1}}\n  current: %s\n  comparison: %s\n"
HYBRID = ('{"version": "2.0", "testCases": [{"id": "c", "name": "n", "input": {"prompt": "p"}, '
          '"expected": {"output": "o", "patterns": ["o"]}, "evaluation": {"strategy": "hybrid", "weights": %s}}]}')
LAYOUT = "eval_suite:\n  name: s\n  environment: staging\n  evals:\n    - {id: g, input: {content: a}}\n"
# (position, files to write, the name the refusal must quote). Every position of _nested_fields()
# has one; a per-method probe also checks the grader's `config` reaches the assertion's own check.
PROBES = [
    ("tests.json: testCases[].evaluation.weights", {"tests.json": HYBRID % '{"exact": 1}'}, "'exact'"),
    ("harness: test case.grader", {"s.yaml": GRADED_CASE % "{type: code, kind: x}"}, "'kind'"),
    ("harness: test case.grader.type", {"s.yaml": GRADED_CASE % "{type: robot}"}, "'robot'"),
    ("harness: test case.grader.config.method", {"s.yaml": GRADED_CASE % "{config: {method: fuzzy_match}}"},
     "'fuzzy_match'"),
    *[(f"harness: test case.grader.config.method: {m}",
       {"s.yaml": GRADED_CASE % f"{{type: code, config: {{method: {m}, stricct: true}}}}"}, "'stricct'")
      for m in harness_graders.CODE_METHODS],
    *[(f"harness: test case.grader.type: {t}",
       {"s.yaml": GRADED_CASE % f"{{type: {t}, config: {{rubric: r, stricct: true}}}}"}, "'stricct'")
      for t in ("model", "human")],
    ("harness: test case.expected", {"s.yaml": GRADED_CASE.replace("value: a}", "value: a, alt: [b]}") % "{}"},
     "'alt'"),
    ("harness: test case.expected.type", {"s.yaml": GRADED_CASE.replace("type: exact", "type: exactly") % "{}"},
     "'exactly'"),
    ("harness: test case.comparison", {"s.yaml": COMPARED_CASE % ("{input: x}", "{type: structural, ignore: [a]}")},
     "'ignore'"),
    ("harness: test case.comparison.type", {"s.yaml": COMPARED_CASE % ("{input: x}", "{type: fuzzy}")}, "'fuzzy'"),
    ("harness: test case.comparison.options",
     {"s.yaml": COMPARED_CASE % ("{input: x}", "{type: structural, options: {require: [a]}}")}, "'require'"),
    ("harness: test case.comparison.tolerance",
     {"s.yaml": COMPARED_CASE % ("{input: x}", "{type: structural, tolerance: {min_delta: 1}}")}, "'min_delta'"),
    ("harness: test case.comparison.tolerance (numeric)",
     {"s.yaml": COMPARED_CASE % ("{input: x}", "{type: numeric, tolerance: {a: {min_dleta: 1}}}")}, "'min_dleta'"),
    ("harness: test case.current", {"s.yaml": COMPARED_CASE % ("{input: x, run: y}", "{type: exact}")}, "'run'"),
    ("harness: test case.current.execution",
     {"s.yaml": COMPARED_CASE % ("{input: x, execution: {type: http}}", "{type: exact}")}, "current.execution"),
    ("harness: suite folder config/thresholds.yaml",
     {"s.yaml": LAYOUT, "config/thresholds.yaml": "pass_rte: 0.5\n"}, "'pass_rte'"),
    ("harness: suite folder config/graders.yaml", {"s.yaml": LAYOUT, "config/graders.yaml": "a: {}\n"},
     "config/graders.yaml is not read"),
]


@pytest.mark.parametrize("position, files, quoted", PROBES, ids=[p[0] for p in PROBES])
def test_a_name_a_position_does_not_use_is_refused(position: str, files: dict[str, str], quoted: str,
                                                    tmp_path: Path) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / next(iter(files)))
    (line,) = [e for e in str(caught.value).splitlines() if quoted in e]
    assert re.match(r"^\S+:\d+: ", line), line  # file and line, then the field path and why


def _position(field: str) -> str:
    """Where a nested name sits: ``...grader.type: code`` -> ``...grader.type``,
    ``...weights.custom`` -> ``...weights``; a layout file is its own position."""
    if "suite folder" in field:
        return field
    head, _, value = field.rpartition(": ")
    return head if "." not in value else field.rsplit(".", 1)[0]


def test_every_nested_position_has_a_probe() -> None:
    """A position added to _nested_fields() without a probe fails here."""
    positions = {_position(f) for f in _nested_fields()}
    probed = {p[0] for p in PROBES}
    assert positions <= probed, sorted(positions - probed)
