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

This module parses the suite level (metadata, ``execution``, thresholds,
settings, workspace) and assembles the ``Suite``; the tests are parsed in
``eval_yaml_cases`` and the fields both levels share in ``eval_yaml_fields``.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import ValidationError

from eval_pipelines.analysis.threshold_names import canonical_thresholds, threshold_k
from eval_pipelines.suite.assertions import pydantic_errors
from eval_pipelines.suite.errors import SpecError, SpecErrors, accepted_not_used
from eval_pipelines.formats.agentv.env import interpolate
from eval_pipelines.formats.agentv.parts import input_files_texts
from eval_pipelines.formats.agentv.workspace import parse_workspace
from eval_pipelines.formats.eval_yaml.cases import SuiteDefaults, collect_tests
from eval_pipelines.formats.eval_yaml.fields import (
    EXECUTION_KEYS, LoadContext, assert_field, parse_assertions, parse_max_steps, parse_messages, parse_targets, parse_tools,
)
from eval_pipelines.suite.models import (
    Assertion, Execution, Message, RegressionSettings, Settings, Suite, TestCase, Trials,
)
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.analysis.threshold_names import EXPECTED_THRESHOLD, threshold_name_problem
from eval_pipelines.suite.source import Document
from eval_pipelines.suite.tags import tag_list
from eval_pipelines.formats import compat

NAME_PATTERN = re.compile(r"^[a-z0-9-]+$")
SUITE_KEYS = {
    "$schema", "name", "description", "version", "author", "tags", "license", "requires",
    "execution", "workspace", "assert", "tests", "input", "input_files", "target", "thresholds", "settings",
    "evaluator", "dataset", "judge", "baseline", "regression", "blocking", "tools", "max_steps", "assertions",
}
TRIALS_KEYS = {"count", "strategy", "cost_limit_usd"}
# Top-level fields AgentV reads (eval-validator.ts KNOWN_TOP_LEVEL_FIELDS and its deprecated names, and
# HEAD's blocks left in place when invalid) that we do not: refused by name, never warned as ignored.
AGENTV_SUITE_READS = {"category", "evaluators", "preprocessors", "eval_cases", "evalcases", "governance", "experiment"}


def _execution(ctx: LoadContext, doc: Document, raw: Any) -> tuple[Execution, list[Assertion]]:
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
        evaluators = parse_assertions(ctx, doc, path + ("evaluators",), raw["evaluators"])
    return Execution(targets=parse_targets(ctx, doc, path, raw) or [], trials=trials, cache=cache), evaluators


def _metadata(ctx: LoadContext, doc: Document, raw: dict[str, Any]) -> dict[str, Any]:
    # AgentV's rule (and the seed's "files without metadata keep working"): `name`
    # opens the metadata block; without `name`, `description`, `version`, `tags`, ...
    # are ordinary suite fields. Seed 001 also requires a `description` then; AgentV's
    # own parser (metadata.ts) does not, and its examples rely on that: a warning.
    out: dict[str, Any] = {}
    if "name" in raw and "description" not in raw:
        ctx.warnings.append(f"{doc.file}: the suite has a `name` but no `description` (seed 001 asks for one "
                            "with the metadata block; AgentV reads the file without it)")
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
        if isinstance(raw["tags"], str) or (isinstance(raw["tags"], list)
                                            and all(isinstance(t, str) for t in raw["tags"])):
            out["tags"] = tag_list(raw["tags"])  # a string is one tag
        else:
            ctx.error(doc, ("tags",), "invalid tags", "a list of strings, or one string")
    if "requires" in raw:
        req = raw["requires"]
        if isinstance(req, dict) and all(isinstance(v, str) for v in req.values()):
            out["requires"] = {str(k): v for k, v in req.items()}
        else:
            ctx.error(doc, ("requires",), "invalid requires", "a mapping of tool name to version range")
    return out


def _unused_fields(ctx: LoadContext, doc: Document, raw: dict[str, Any]) -> None:
    """Fields that load but cannot shape a run here: each gets a stored warning."""
    requires = raw.get("requires")
    if isinstance(requires, dict):
        for tool in requires:
            ctx.warnings.append(accepted_not_used(doc, ("requires", tool), (
                "tool versions are not checked: eval-pipelines runs the suite itself, not with that tool")))
    if "evaluator" in raw:
        ctx.warnings.append(accepted_not_used(doc, ("evaluator",), (
            "a sidecar's default evaluator is not applied; write it in `assert` (suite level) instead")))
    if "dataset" in raw:
        ctx.warnings.append(accepted_not_used(doc, ("dataset",), (
            "the dataset name is not stored; the suite is named by `name`, else its skill")))
    workspace = raw.get("workspace")
    if isinstance(workspace, dict) and workspace.get("dependencies"):
        ctx.warnings.append(accepted_not_used(doc, ("workspace", "dependencies"), (
            "dependencies are not installed; setup scripts and targets run with the tools already present")))


def load_eval_yaml(doc: Document, policy: PathPolicy, tool: str | None = None) -> tuple[Suite, list[str]]:
    """An eval.yaml suite; ``tool="AgentV"`` reads an AgentV file by formats/compat.py's rule (AgentV's
    eval-validator.ts warns "Unknown field ... will be ignored" at the top and test levels)."""
    ctx = LoadContext(policy, tool=tool)
    raw, used, missing = interpolate(doc.data, lambda path, message, expected: ctx.error(doc, path, message, expected))
    if used:
        ctx.warnings.append(f"{doc.file}: interpolated from the environment: {', '.join(used)}")
    if missing:
        ctx.warnings.append(f"{doc.file}: environment variable(s) not set, interpolated as empty text: "
                            + ", ".join(missing))
    doc = Document(doc.file, raw, doc.lines)
    if not isinstance(raw, dict):
        raise SpecErrors.single(doc.file, f"top level is {type(raw).__name__}", line=1,
                                expected="a mapping with `tests`")
    compat.unknown_fields(ctx, doc, (), raw, SUITE_KEYS, reads=AGENTV_SUITE_READS)
    meta = _metadata(ctx, doc, raw)
    execution, evaluators = _execution(ctx, doc, raw.get("execution"))
    if execution.targets == [] and "target" in raw:
        execution.targets = parse_targets(ctx, doc, (), {"target": raw["target"]}) or []
    suite_input: list[Message] = []
    if "input" in raw:
        suite_input = parse_messages(ctx, doc, ("input",), raw["input"]) or []
    suite_files = input_files_texts(ctx, doc, ("input_files",), raw["input_files"]) if "input_files" in raw else None
    assert_key, raw_assert = assert_field(ctx, doc, (), raw)
    defaults = SuiteDefaults(suite_input, parse_assertions(ctx, doc, (assert_key,), raw_assert) + evaluators,
                             parse_tools(ctx, doc, ("tools",), raw.get("tools")),
                             parse_max_steps(ctx, doc, ("max_steps",), raw.get("max_steps")), suite_files)
    thresholds = raw.get("thresholds") or {}
    if not isinstance(thresholds, dict):
        ctx.error(doc, ("thresholds",), "invalid thresholds", "a mapping of metric name to number")
        thresholds = {}
    for key, value in list(thresholds.items()):
        if (problem := threshold_name_problem(key)) is not None:  # else every run fails "missing"
            ctx.error(doc, ("thresholds", key), problem, EXPECTED_THRESHOLD)
            thresholds.pop(key)
            continue
        # NaN would crash the gate after the model calls were paid; a negative minimum disables it.
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            ctx.error(doc, ("thresholds", key), f"invalid threshold {value!r}",
                      "a finite number, at least 0 (a rate in [0, 1])")
            thresholds.pop(key)
    thresholds = canonical_thresholds(thresholds)  # `pass^3` is `pass_hat_3`, `pass@3` is `pass_at_3`
    _trials_for_gates(ctx, doc, raw, execution, thresholds)
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
    workspace = parse_workspace(ctx, doc, raw["workspace"]) if "workspace" in raw else None
    _unused_fields(ctx, doc, raw)
    workers = (raw.get("execution") or {}).get("workers") if isinstance(raw.get("execution"), dict) else None
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            ctx.error(doc, ("execution", "workers"), f"invalid workers {workers!r}", "a positive integer")
        elif settings.max_concurrency is None:
            settings.max_concurrency = workers  # AgentV's name for how many tests run at once
    tests: list[TestCase] = []
    if "tests" not in raw:
        ctx.error(doc, ("tests",), "required field is missing",
                  "a list of tests or a path to a .jsonl/.csv/.yaml dataset")
    else:
        # A bare dataset run on its own is its own `tests`: reading it is no reference cycle.
        bare = doc.file.suffix.lower() in (".jsonl", ".csv")
        collect_tests(ctx, doc, ("tests",), raw["tests"], defaults, () if bare else (doc.file.resolve(),), tests)
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


def _trials_for_gates(ctx: LoadContext, doc: Document, raw: dict[str, Any], execution: Execution,
                      thresholds: dict[str, Any]) -> None:
    """A pass@k / pass^k gate needs k trials of every case: without `execution.trials` the
    largest k a gate names is run (as seed 003 suites do); fewer trials is refused here,
    since the gate could never be computed and `run` would fail after paying for the calls."""
    needed = max([k for name in thresholds if (k := threshold_k(name))] or [1])
    given = raw.get("execution", {}).get("trials") if isinstance(raw.get("execution"), dict) else None
    if given is None:
        execution.trials.count = max(execution.trials.count, needed)
    elif execution.trials.count < needed:
        ctx.error(doc, ("execution", "trials"), f"{execution.trials.count} trial(s) cannot compute a k={needed} gate",
                  f"trials of at least {needed}, as the thresholds ask")
