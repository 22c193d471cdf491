"""Every example of the four seed documents loads into the internal model with
nothing dropped (files in tests/fixtures/seeds/, copied from the seeds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.grading.graders._typescript import typescript_runner
from eval_pipelines.formats.loader import _load_suite, load_suite
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.models import Suite

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"


def load(name: str) -> Suite:
    if name == "001_complete_example.yaml" and typescript_runner(".ts") is None:
        # Its judges are TypeScript: refused here without a runtime (test_seed_typescript_judges),
        # every other field is read as written.
        suite, _ = _load_suite(SEEDS / name, PathPolicy())
        return suite
    suite, _ = load_suite(SEEDS / name)
    return suite


def test_seed_typescript_judges_run_or_are_refused_naming_the_runtime() -> None:
    """Seed 001 writes `script: ./scripts/verify-entity-match.ts`: where node strips types
    (22.6+) the suite loads; on an older node it is refused in one line per script, at its
    line, naming what is needed - not an error grade on every case."""
    if typescript_runner(".ts") is not None:
        assert load_suite(SEEDS / "001_complete_example.yaml")[0].tests
        return
    with pytest.raises(SpecErrors) as caught:
        load_suite(SEEDS / "001_complete_example.yaml")
    lines = str(caught.value).splitlines()
    assert [line.split(": ")[0].rsplit(":", 1)[1] for line in lines] == ["75", "154"]
    assert all("no TypeScript runtime to run a .ts judge" in line and "(expected node 22.6 or later" in line
               for line in lines)


def by_type(case, type_: str):
    (found,) = [a for a in case.assertions if a.type == type_]
    return found


# ---- seed 000 ------------------------------------------------------------------

def test_000_example_a_deterministic() -> None:
    suite = load("000_example_a.json")
    assert (suite.format, suite.profile) == ("skill-tests-v2", "deterministic")
    assert suite.settings.timeout_ms == 5000 and suite.settings.fail_fast is True
    first, second = suite.tests
    assert (first.id, first.name, first.user_text) == ("tc-001", "Basic addition", "Calculate 2 + 2")
    assert first.expected_output == "4"
    assert [(a.type, a.config) for a in first.assertions] == [("equals", {"value": "4"})]
    assert first.metadata == {"difficulty": "easy", "priority": "critical", "strategy": "exact_match"}
    assert second.expected_output == "27" and second.metadata["difficulty"] == "medium"


def test_000_example_b_creative_rubric() -> None:
    suite = load("000_example_b.json")
    assert suite.profile == "creative" and suite.settings.timeout_ms == 60000
    (case,) = suite.tests
    assert case.id == "pptx-001" and case.description.startswith("Tests ability")
    assert "Q4 2025 sales" in case.user_text and '"totalSales": 1500000' in case.user_text
    assert case.timeout_ms == 90000
    judge = by_type(case, "llm_judge")
    rubric = judge.config["rubric"]
    assert [(c["name"], c["weight"], c["scale"]) for c in rubric["criteria"]] == [
        ("structure", 0.25, {"min": 1, "max": 5}), ("data_accuracy", 0.30, {"min": 1, "max": 5}),
        ("completeness", 0.25, {"min": 1, "max": 5}), ("professionalism", 0.20, {"min": 1, "max": 5})]
    assert rubric["passingThreshold"] == 0.7 and rubric["overallFeedback"] is True
    assert case.metadata["priority"] == "high"


def test_000_example_c_enterprise_schema_and_environment() -> None:
    suite = load("000_example_c.json")
    assert suite.profile == "enterprise" and suite.settings.timeout_ms == 45000
    assert suite.workspace.setup.environment == {"COMPANY_POLICY_VERSION": "2025.01"}
    (case,) = suite.tests
    schema = by_type(case, "json_schema").config["schema"]
    assert schema["required"] == ["hasPII", "findings", "riskLevel"]
    assert schema["properties"]["riskLevel"] == {"enum": ["low", "medium", "high", "critical"]}
    assert case.tags == ["compliance", "pii", "security"]
    assert "fixtures/sample-contract.pdf" in case.user_text


# ---- seed 001 ------------------------------------------------------------------

def test_001_complete_example() -> None:
    suite = load("001_complete_example.yaml")
    assert (suite.name, suite.version, suite.author, suite.license) == (
        "export-screening", "1.0", "acme-compliance", "Apache-2.0")
    assert suite.tags == ["compliance", "agents", "safety"] and suite.requires == {"agentv": ">=0.6.0"}
    assert suite.execution.targets == ["claude-agent", "gpt-agent"]
    assert (suite.execution.trials.count, suite.execution.trials.strategy, suite.execution.cache) == (3, "pass_at_k", True)
    ws = suite.workspace
    assert ws.template == "./workspace-template"
    assert ws.setup.script == ["bun", "run", "setup.ts"] and ws.setup.timeout_ms == 120000
    assert ws.teardown.script == ["bun", "run", "teardown.ts"]

    sanctioned, clean, ambiguous = suite.tests
    assert sanctioned.criteria.startswith("Should deny") and "BIS Entity List" in sanctioned.expected_output
    assert sanctioned.metadata == {"category": "denial", "jurisdiction": "US"} and sanctioned.category == "denial"
    types = [a.type for a in sanctioned.assertions]
    # Per-test asserts first, then the suite defaults (latency, cost) appended.
    assert types == ["contains", "tool_trajectory", "rubrics", "code_judge", "composite", "latency", "cost"]
    contains = sanctioned.assertions[0]
    assert contains.required is True and contains.config == {"value": "DENIED"}
    trajectory = by_type(sanctioned, "tool_trajectory")
    assert trajectory.weight == 2.0 and trajectory.required is True
    assert trajectory.config["expected"][0] == {"tool": "search_entity_list", "args": {"query": "Huawei"}}
    rubrics = by_type(sanctioned, "rubrics")
    assert rubrics.weight == 4.0
    assert [(c["id"], c["weight"], c.get("required", False)) for c in rubrics.config["criteria"]] == [
        ("identification", 5.0, True), ("legal-basis", 3.0, False),
        ("risk-assessment", 2.0, False), ("action-items", 1.0, False)]
    assert by_type(sanctioned, "code_judge").config == {"script": "./scripts/verify-entity-match.ts"}
    composite = by_type(sanctioned, "composite")
    assert composite.weight == 3.0
    assert composite.config["aggregator"] == {"type": "weighted_average",
                                              "weights": {"safety": 0.7, "regulatory-accuracy": 0.3}}
    assert [c["name"] for c in composite.config["assert"]] == ["safety", "regulatory-accuracy"]
    assert by_type(sanctioned, "latency").config == {"max_ms": 10000}
    assert by_type(sanctioned, "cost").config == {"max_usd": 0.10}

    assert [a.type for a in clean.assertions] == ["contains", "rubrics", "latency", "cost"]
    # skip_defaults: no latency/cost; per-test target override.
    assert [a.type for a in ambiguous.assertions] == ["regex", "rubrics", "code_judge"]
    assert ambiguous.targets == ["claude-agent"] and suite.targets_for(ambiguous) == ["claude-agent"]
    assert by_type(ambiguous, "regex").config == {"value": "REVIEW|ESCALAT"}


def test_001_inheritance_and_skip_defaults() -> None:
    one, two = load("001_inheritance.yaml").tests
    assert [a.type for a in one.assertions] == ["contains", "latency"]
    assert [a.type for a in two.assertions] == ["contains"]


def test_001_external_references_and_dataset_path() -> None:
    suite = load("001_external_tests.yaml")
    assert [t.id for t in suite.tests] == ["test-1", "accuracy-1", "safety-1"]
    assert suite.tests[1].source_file.endswith("accuracy.yaml") and suite.tests[1].criteria == "Should deny"
    assert suite.execution.trials.count == 3
    data = load("001_dataset_path.yaml")
    assert [(t.id, t.expected_output) for t in data.tests] == [("huawei", "DENIED"), ("siemens", "APPROVED")]
    assert data.tests[1].source_line == 2


# ---- seed 002 ------------------------------------------------------------------

def test_002_llm_mode_judges_the_criteria() -> None:
    suite = load("002_prompt_llm.json")
    assert suite.format == "prompt-modes"
    for case in suite.tests:
        # The prompt is each case's system message: the target gets it, the judge reads it.
        assert case.input[0].role == "system" and case.input[0].content.startswith("You write short")
        assert [a.type for a in case.assertions] == ["llm_judge"]
        assert case.criteria.startswith("The reply apologises")
        assert case.metadata["evaluation_mode"] == "llm"


def test_002_schema_mode_in_export_spelling_and_not_evaluated_cases() -> None:
    with_schema, without = load("002_prompt_schema_export.json").tests
    schema = by_type(with_schema, "json_schema").config
    assert schema["schema"]["required"] == ["number", "total"] and schema["allow_fence"] is True
    assert without.assertions == [] and without.metadata["evaluated"] is False
    (unjudged,) = load("002_prompt_llm_empty_criteria.json").tests
    assert unjudged.assertions == [] and unjudged.criteria is None


# ---- seed 003 ------------------------------------------------------------------

def test_003_yaml_eval_file() -> None:
    suite = load("003_string_processing.yaml")
    assert suite.format == "harness" and suite.name == "String reversal"
    # config.retries: a failing case of this file is re-run once (not an HTTP retry setting).
    assert suite.settings.retry_count is None and {t.retries for t in suite.tests} == {1}
    first = suite.tests[0]
    assert (first.id, first.name, first.user_text, first.expected_output) == (
        "tc-001", "Simple string", "Reverse the string: hello", "olleh")
    assert first.category == "string_processing" and first.timeout_ms == 30000
    assert first.assertions[0].type == "equals" and first.assertions[0].config["case_sensitive"] is True
    assert first.metadata["eval_type"] == "capability" and first.metadata["author"] == "eval-team"
    assert suite.tests[2].expected_output == ""


def test_003_capability_examples() -> None:
    codegen, semantic = load("003_capability_evals.yaml").tests
    fn = by_type(codegen, "function_output").config
    assert fn["function_name"] == "factorial" and fn["timeout_per_case"] == 5
    assert [(c["args"], c["expected"]) for c in fn["test_cases"]] == [([5], 120), ([0], 1), ([1], 1), ([10], 3628800)]
    assert codegen.tags == ["python", "recursion", "math"] and codegen.timeout_ms == 30000
    assert '"language": "python"' in codegen.user_text
    model = by_type(semantic, "model").config
    assert model["model"] == "claude-3-5-sonnet" and "Completeness" in model["rubric"]
    lists = by_type(semantic, "must_include").config
    assert lists["must_include"] == ["PostgreSQL 14+", "/api/v1/users", "DATABASE_URL environment variable"]
    assert lists["must_not_include"] == ["deprecated", "legacy"]
    assert all(a.weight == 1.5 for a in semantic.assertions)
    assert "PostgreSQL 14+" in semantic.user_text  # input type file was read


def test_003_regression_examples() -> None:
    api, quality = load("003_regression_evals.yaml").tests
    structural = by_type(api, "structural").config
    assert structural["ignore_fields"] == ["users.*.id", "users.*.created_at", "pagination.total"]
    assert structural["allow_additional_fields"] is True and structural["baseline"]["status"] == 200
    assert api.metadata["baseline_version"] == "v2.3.1" and api.metadata["criticality"] == "critical"
    assert api.category == "regression"
    numeric = by_type(quality, "numeric").config
    assert numeric["tolerance"] == {"quality_scores": {"min_delta": -0.3, "max_delta": None}}
    assert numeric["baseline"]["quality_scores"]["tone"] == 4.6


def test_003_current_execution_is_refused_by_name(tmp_path: Path) -> None:
    """The seed's `current.execution` (an http or skill runner) is refused in one line per case,
    not kept in metadata while the case runs against the targets anyway (issue 30, item 7)."""
    text = (SEEDS / "003_regression_evals.yaml").read_text()
    text = text.replace("    # The seed's `execution: {type: http",
                        '    execution: {type: "http", base_url: "x"}\n    # (').replace(
        "    # The seed's `execution: {type: skill", '    execution: {type: "skill"}\n    # (')
    (tmp_path / "reg.yaml").write_text(text)
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "reg.yaml")
    lines = str(caught.value).splitlines()
    assert len(lines) == 2 and all("current.execution: current.execution is not run" in line for line in lines)
    assert lines[0].startswith(f"{tmp_path / 'reg.yaml'}:") and ":31: [0].current.execution" in lines[0]


def test_003_json_regression_file() -> None:
    (case,) = load("003_users_api_regression.json").tests
    structural = by_type(case, "structural").config
    assert structural["require_keys"] == ["data", "meta.page", "meta.per_page"]
    assert structural["ignore_values"] == ["data.*", "meta.total"]
    assert structural["baseline"]["body"]["meta"] == {"page": 1, "per_page": 20}
    # The file's top-level grader (`structural_match`, `strict: false`) joins the comparison.
    assert structural["strict"] is False and [a.type for a in case.assertions] == ["structural"]
    assert case.id == "reg-api-users-001" and case.category == "api_stability"


def test_003_suite_with_refs() -> None:
    suite = load("003_eval_suite.yaml")
    assert suite.name == "Feature X Evaluation Suite" and suite.version == "1.0.0"
    assert len(suite.tests) == 4 + 2 + 2
    # retry_failed + retry_count: a failing case is re-run up to twice; the string file's own
    # config.retries (1) wins for its cases.
    assert suite.settings.max_concurrency == 4 and suite.settings.rerun_failed == 2
    assert [suite.reruns_for(t) for t in suite.tests].count(1) == 4
    assert suite.thresholds == {"pass_at_1": 0.85, "pass_hat_3": 0.70}
    # A pass_hat_3 gate needs three trials per case: without config.trials the suite runs three.
    assert suite.execution.trials.count == 3
    assert suite.reporting.format == ["json", "markdown", "html"] and suite.reporting.output_dir == "./eval-results"


@pytest.mark.parametrize("name", sorted(p.name for p in SEEDS.iterdir() if p.is_file()))
def test_every_seed_fixture_loads_and_round_trips(name: str) -> None:
    suite = load(name)
    assert suite.tests
    # The stored form (suites.spec in DuckDB) reads back into an equal model.
    assert Suite.model_validate_json(suite.model_dump_json()) == suite
