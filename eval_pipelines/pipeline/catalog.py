"""The pipeline's stages and checks as plain facts: names, tables, descriptions, order.

``stages.STAGES`` and ``checks.CHECKS`` pair each entry with the function that does the
work. This module holds the facts alone, and imports nothing of the evaluation core, so
the Dagster code location can declare its assets and checks without importing pandas,
DuckDB, the formats and the graders (about a second at every start of a code server,
a run and a `dagster` command); the run imports them when it computes.
"""

from __future__ import annotations

from dataclasses import dataclass


class Markdown(str):
    """Metadata text to show as Markdown (the Dagster layer renders it so)."""


class FilePath(str):
    """Metadata naming a file the stage wrote."""


@dataclass(frozen=True)
class StageSpec:
    name: str  # the Dagster asset's name
    description: str
    tables: tuple[str, ...]
    kinds: frozenset[str]
    function: str  # the function of ``pipeline/stages.py`` that runs it
    # What it takes from earlier stages of the run (``StageContext.memo`` keys, read back
    # from DuckDB when missing); the rest is let go, so a 100,000-case run does not hold
    # every table in memory at once.
    reads: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckSpec:
    name: str
    stage: str  # the stage (asset) it checks
    description: str
    function: str  # the function of ``pipeline/checks.py`` that evaluates it
    blocking: bool = False


STAGE_MODULE = "eval_pipelines.pipeline.stages"
CHECK_MODULE = "eval_pipelines.pipeline.checks"

STAGE_SPECS: tuple[StageSpec, ...] = (
    StageSpec("eval_suite", "The skill version's eval suite, parsed from any supported format and validated.",
              ("suites",), frozenset({"python", "duckdb"}), "load_suite", ("loaded",)),
    StageSpec("eval_datasets", "External dataset files (JSONL/CSV/YAML) the suite read, with content hashes.",
              ("datasets",), frozenset({"duckdb"}), "record_datasets", ("suite",)),
    StageSpec("test_cases", "Every test case of the suite (inline and external dataset rows), one row each.",
              ("test_cases",), frozenset({"duckdb"}), "record_test_cases", ("suite",)),
    StageSpec("model_outputs", "One output (or error row) per case x target x trial, from the suite's targets.",
              ("model_outputs",), frozenset({"openai", "duckdb"}), "call_targets", ("suite",)),
    StageSpec("grades", "One grade per output x assertion, with score, status and readable details.",
              ("grades",), frozenset({"python", "duckdb"}), "grade", ("suite", "model_outputs", "early_grades")),
    StageSpec("test_results", "Per output: gated weighted score, verdict (pass/borderline/fail) and status.",
              ("test_results",), frozenset({"duckdb"}), "score", ("suite", "grades", "outputs")),
    StageSpec("metrics", "Suite metrics per configuration and target (pass rate, mean score, pass@k, pass^k, "
                         "latency, cost, run summary), per-case metrics over trials (table case_metrics) and the "
                         "skill's uplift, with minus without (table uplifts, view skill_uplift).",
              ("metrics", "case_metrics", "uplifts"), frozenset({"duckdb"}), "aggregate",
              ("suite", "test_results", "grades", "outputs")),
    StageSpec("regression_report", "Per-case flips and metric changes against the previous version and the "
                                   "previous night, with p-values and intervals (table regressions).",
              ("regressions",), frozenset({"duckdb"}), "compare_with_baselines", ("suite", "test_results")),
    StageSpec("trigger_results", "Trigger evaluation: each query of the package's trigger set run N times by "
                                 "the agent, the skill offered among others; whether it loaded the skill "
                                 "(table trigger_results).",
              ("trigger_results",), frozenset({"openai", "duckdb"}), "run_trigger_evals", ("suite",)),
    StageSpec("blind_comparisons", "Opt-in: each output judged against the baseline version's output of the same "
                                   "case, labelled A/B in a seeded random order (table blind_comparisons).",
              ("blind_comparisons",), frozenset({"openai", "duckdb"}), "run_blind_comparisons", ("suite",)),
    StageSpec("eval_report", "The run's reports (JSON eval_report, Markdown phase report, self-contained HTML), "
                             "compared with the baseline version; files under reports/<date>/.",
              (), frozenset({"json", "markdown", "html"}), "write_reports", ("reporting",)),
)
STAGE_NAMES = tuple(s.name for s in STAGE_SPECS)

CHECK_SPECS: tuple[CheckSpec, ...] = (
    CheckSpec("every_case_has_an_output", "model_outputs",
              "Cases in = rows out: one output or error row per case x target x trial.", "outputs_complete"),
    CheckSpec("suite_thresholds_met", "metrics",
              "Every threshold the suite declares (pass rate, pass@k, pass^k) is met. Skipped when the suite "
              "declares none.", "thresholds_met"),
    CheckSpec("skill_helps", "metrics",
              "The skill's uplift: each run's share of expectations met with the skill installed minus without "
              "it, paired by case (exact one-sided sign-flip tests at alpha/2 each, the suite's min_effect "
              "margin). Fails when the skill hurts significantly; 'helps' and 'no measurable effect' pass. "
              "Skipped when the run has no without_skill configuration.", "skill_helps"),
    CheckSpec("blocking_gates", "metrics",
              "For suites marked `blocking: true`: a missed threshold fails the run and stops the regression "
              "report. Passes for suites that are not blocking.", "blocking_gates", blocking=True),
    CheckSpec("no_significant_regression", "regression_report",
              "No regression of the suite pass rate against the previous version or the previous night: fails "
              "when the drop is significant (exact sign-flip test on per-case pass-rate differences, "
              "Holm-adjusted over both comparisons and every target) and large enough (the suite's min_effect "
              "margin under its effect_rule); says 'no regression' only when the 95% interval excludes a drop "
              "of the margin, else 'inconclusive'; names the cases labelled regressed (false-discovery q-value "
              "<= case_fdr). Skipped while there is no baseline.", "no_regression"),
    CheckSpec("no_hidden_breakage", "regression_report",
              "No breakage hidden by the mean: cases can break while others improve and the pass rate stays "
              "put. Fails when more cases dropped significantly on their own trials (one-sided Fisher p <= "
              "0.02) than rose, beyond chance (exact sign test on the two counts, Holm-adjusted over both "
              "comparisons and every target); names the cases labelled regressed at the suite's case_fdr. "
              "Skipped while there is no baseline.", "no_hidden_breakage"),
    CheckSpec("skill_triggers", "trigger_results",
              "The skill's description makes the agent load it when it should: trigger precision, recall and "
              "accuracy over the package's trigger set (a query triggers when its trigger rate reaches the "
              "threshold) at or above the minimums of `triggers:` in its eval-pipelines.yaml (min_accuracy 0.8 "
              "unless set). Skipped without a trigger set or an agent target.", "skill_triggers"),
)
