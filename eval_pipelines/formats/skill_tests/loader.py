"""Seed 000: skill package ``tests.json`` (v1) and ``eval/tests.json`` (v2 ``EvalConfigV2``).

v1 is converted to v2 first (:func:`v1_to_v2`, also used by ``eval-pipelines
convert``), so there is one path from v2 into the internal model. Profiles give
each case its default strategy when ``evaluation.strategy`` is absent.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.assertions import parse_assertion, pydantic_errors
from eval_pipelines.suite.errors import SpecError, SpecErrors, accepted_not_used, unknown_field_errors
from eval_pipelines.formats.skill_tests.checks import missing_profile, rubric_weight_warnings
from eval_pipelines.suite.models import (
    Execution, Message, Settings, Suite, TestCase, Trials, Workspace, WorkspaceScript,
)
from eval_pipelines.suite.source import Document
from eval_pipelines.suite.tags import tag_list

PROFILES = ("deterministic", "structured", "flexible", "creative", "enterprise")
# Seed 000 section 4: the profile's default strategy.
PROFILE_STRATEGY = {
    "deterministic": "exact_match",
    "structured": "json_schema",
    "flexible": "semantic_sim",
    "creative": "llm_judge",
    "enterprise": "hybrid",
}
STRATEGIES = ("exact_match", "regex_match", "json_schema", "semantic_sim", "llm_judge", "hybrid", "custom")
V1_KEYS = {"name", "description", "input", "expectedOutput", "expectedPatterns", "timeout"}
V2_KEYS = {"version", "profile", "settings", "setup", "teardown", "testCases", "suites", "$schema"}
CASE_KEYS = {"id", "name", "description", "tags", "input", "expected", "evaluation", "metadata"}
INPUT_KEYS = {"prompt", "context", "variables"}
EXPECTED_KEYS = {"output", "patterns", "jsonSchema", "semanticThreshold", "rubric", "customScript"}
EVALUATION_KEYS = {"strategy", "timeout", "retryCount", "weights"}
# `trials` is ours (runs per case, for pass@k / pass^k); the others are seed 000's.
SETTINGS_KEYS = {"defaultTimeout", "parallelExecution", "maxConcurrentTests", "failFast", "retryFailed", "trials"}
SUITE_GROUP_KEYS = {"name", "testIds", "runInSequence"}
SETUP_KEYS = {"script", "environment", "dependencies"}
TEARDOWN_KEYS = {"script"}
# settings.retryFailed: a failing case without its own evaluation.retryCount runs again this often.
RETRY_FAILED_RERUNS = 1
MAX_TIMEOUT_MS = 24 * 3600 * 1000
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


def is_v1(data: Any) -> bool:
    return isinstance(data, list) or (isinstance(data, dict) and "testCases" not in data
                                      and "version" not in data and "tests" in data)


def v1_to_v2(data: Any) -> dict[str, Any]:
    """Convert a v1 test list to an ``EvalConfigV2`` mapping (seed 000 migration path)."""
    tests = data["tests"] if isinstance(data, dict) else data
    cases = []
    for i, test in enumerate(tests if isinstance(tests, list) else []):
        if not isinstance(test, dict):
            cases.append(test)
            continue
        case: dict[str, Any] = {
            "id": f"tc-{i + 1:03d}",
            "name": test.get("name"),
            "input": {"prompt": test.get("input")},
            "expected": {},
            "evaluation": {},
        }
        if test.get("description") is not None:
            case["description"] = test["description"]
        strategies = []
        if test.get("expectedOutput") is not None:
            case["expected"]["output"] = test["expectedOutput"]
            strategies.append("exact_match")
        if test.get("expectedPatterns"):
            case["expected"]["patterns"] = test["expectedPatterns"]
            strategies.append("regex_match")
        if len(strategies) == 1:
            case["evaluation"]["strategy"] = strategies[0]
        elif strategies:
            case["evaluation"]["strategy"] = "hybrid"
        if test.get("timeout") is not None:
            case["evaluation"]["timeout"] = test["timeout"]
        cases.append(case)
    return {"version": "2.0", "profile": "deterministic", "settings": {}, "testCases": cases}


def substitute(template: str, variables: dict[str, Any]) -> str:
    """``{{name}}`` substitution: plain text replacement, no expressions, no code."""
    return _VARIABLE.sub(lambda m: str(variables.get(m.group(1), m.group(0))), template)


class _Loader:
    def __init__(self, doc: Document, v1: bool) -> None:
        self.doc = doc
        self.v1 = v1
        self.errors: list[SpecError] = []
        self.profile = "deterministic"

    def error(self, path: tuple[Any, ...], message: str, expected: str | None = None) -> None:
        self.errors.append(SpecError(str(self.doc.file), path, message, self.doc.line_of(path), expected))

    def unknown(self, path: tuple[Any, ...], raw: dict[str, Any], known: set[str]) -> None:
        self.errors.extend(unknown_field_errors(self.doc, path, raw, known))

    def timeout_ms(self, raw: Any, path: tuple[Any, ...]) -> int | None:
        """A timeout in milliseconds: a positive, finite number (not a string, list, NaN or 1e400)."""
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) \
                or not 0 < raw <= MAX_TIMEOUT_MS:
            self.error(path, f"invalid timeout {raw!r}",
                       f"a number of milliseconds, more than 0 and at most {MAX_TIMEOUT_MS}")
            return None
        return max(1, int(raw))

    def mapping(self, raw: Any, path: tuple[Any, ...], known: set[str]) -> dict[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.error(path, f"got {type(raw).__name__}", "a mapping")
            return {}
        self.unknown(path, raw, known)
        return raw

    def assertions_for(self, strategy: str, expected: dict[str, Any], evaluation: dict[str, Any],
                       path: tuple[Any, ...]) -> list[Any]:
        exp_path = path + ("expected",)
        raw: list[tuple[dict[str, Any], tuple[Any, ...]]] = []
        if strategy in ("exact_match", "hybrid") and "output" in expected:
            raw.append(({"type": "equals", "name": "exact_match", "value": expected["output"]},
                        exp_path + ("output",)))
        if strategy in ("regex_match", "hybrid") and expected.get("patterns"):
            raw.append(({"type": "regex", "name": "regex_match", "value": expected["patterns"]},
                        exp_path + ("patterns",)))
        if strategy in ("json_schema", "hybrid") and "jsonSchema" in expected:
            raw.append(({"type": "json_schema", "name": "json_schema", "schema": expected["jsonSchema"]},
                        exp_path + ("jsonSchema",)))
        if strategy in ("semantic_sim", "hybrid") and (
                strategy == "semantic_sim" or "semanticThreshold" in expected):
            item = {"type": "semantic_sim", "name": "semantic_sim", "value": expected.get("output")}
            if "semanticThreshold" in expected:
                item["threshold"] = expected["semanticThreshold"]
            raw.append((item, exp_path + ("semanticThreshold",) if "semanticThreshold" in expected else exp_path))
        if strategy in ("llm_judge", "hybrid") and (strategy == "llm_judge" or "rubric" in expected):
            from eval_pipelines.grading.graders.llm_judge import CREATIVE_PROFILE_RUBRIC

            rubric = expected.get("rubric") or (CREATIVE_PROFILE_RUBRIC if self.profile == "creative" else None)
            item = {"type": "llm_judge", "name": "llm_judge"}
            if rubric is not None:
                item["rubric"] = rubric
            raw.append((item, exp_path + ("rubric",)))
        if strategy in ("custom", "hybrid") and (strategy == "custom" or "customScript" in expected):
            if not expected.get("customScript"):
                self.error(exp_path + ("customScript",), "required for strategy custom",
                           "a Python or JavaScript script path relative to the tests file")
            else:
                raw.append(({"type": "code_judge", "name": "custom", "script": expected["customScript"]},
                            exp_path + ("customScript",)))
        if strategy == "semantic_sim" and "output" not in expected:
            self.error(exp_path + ("output",), "required for strategy semantic_sim",
                       "the reference text to compare with")
        if strategy == "exact_match" and "output" not in expected:
            self.error(exp_path + ("output",), "required for strategy exact_match")
        if strategy == "regex_match" and not expected.get("patterns"):
            self.error(exp_path + ("patterns",), "required for strategy regex_match", "a list of patterns")
        if strategy == "json_schema" and "jsonSchema" not in expected:
            self.error(exp_path + ("jsonSchema",), "required for strategy json_schema", "a JSON Schema")
        weights = self.weights(evaluation.get("weights"), [item["name"] for item, _ in raw], path)
        out = []
        for item, item_path in raw:
            if item["name"] in weights:
                item["weight"] = weights[item["name"]]
            parsed = parse_assertion(item, self.doc, item_path, self.errors)
            if parsed is not None:
                out.append(parsed)
        return out

    def weights(self, raw: Any, names: list[str], path: tuple[Any, ...]) -> dict[str, Any]:
        """``evaluation.weights``: each key names one of this case's assertions (a strategy name);
        a key naming none would leave every assertion at weight 1, so it is refused."""
        where = path + ("evaluation", "weights")
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.error(where, f"got {type(raw).__name__}", "a mapping of strategy name to weight")
            return {}
        for key in raw:
            if key not in names:
                # A looser match than field names: `regexx` is meant for `regex_match`.
                guess = next(iter(difflib.get_close_matches(str(key), names, n=1, cutoff=0.5)), None)
                self.error(where + (key,), f"{key!r} names no assertion of this case"
                           + (f"; did you mean {guess!r}?" if guess else ""),
                           "one of " + (", ".join(names) or "(none: the case has no assertion)"))
        return raw

    def case(self, raw: Any, i: int, profile: str) -> TestCase | None:
        self.profile = profile
        path: tuple[Any, ...] = (i,) if self.v1 else ("testCases", i)
        if not isinstance(raw, dict):
            self.error(path, f"got {type(raw).__name__}", "a test case mapping")
            return None
        self.unknown(path, raw, CASE_KEYS)
        for key in ("name",) if self.v1 else ("id", "name"):
            if not isinstance(raw.get(key), str) or not raw.get(key):
                self.error(path + (key,),
                           "required field is missing" if raw.get(key) is None else f"invalid {key}",
                           "a non-empty string")
        inp = self.mapping(raw.get("input"), path + ("input",), INPUT_KEYS)
        prompt = inp.get("prompt")
        if not isinstance(prompt, str):
            self.error(path + ("input",) if self.v1 else path + ("input", "prompt"),
                       "required field is missing" if prompt is None else "invalid prompt", "a string")
            return None
        variables = inp.get("variables") or {}
        if not isinstance(variables, dict):
            self.error(path + ("input", "variables"), "invalid variables", "a mapping of name to string")
            variables = {}
        content = substitute(prompt, variables)
        if inp.get("context"):
            content += "\n\nContext:\n" + json.dumps(inp["context"], indent=2, ensure_ascii=False)
        expected = self.mapping(raw.get("expected"), path + ("expected",), EXPECTED_KEYS)
        evaluation = self.mapping(raw.get("evaluation"), path + ("evaluation",), EVALUATION_KEYS)
        strategy = evaluation.get("strategy") or self.default_strategy(profile, expected)
        if strategy not in STRATEGIES:
            self.error(path + ("evaluation", "strategy"), f"unknown strategy {strategy!r}",
                       "one of " + ", ".join(STRATEGIES))
            return None
        assertions = self.assertions_for(strategy, expected, evaluation, path)
        metadata = raw.get("metadata") or {}
        if not isinstance(metadata, dict):
            self.error(path + ("metadata",), "invalid metadata", "a mapping")
            metadata = {}
        timeout = self.timeout_ms(evaluation.get("timeout"), path + ("evaluation", "timeout"))
        retries = evaluation.get("retryCount")
        if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int)
                                    or not 0 <= retries <= 20):
            self.error(path + ("evaluation", "retryCount"), f"invalid retryCount {retries!r}",
                       "an integer from 0 to 20 (re-runs of the case when it fails)")
            retries = None
        try:
            return TestCase(
                id=str(raw.get("id") or f"tc-{i + 1:03d}"),
                name=raw.get("name"),
                description=raw.get("description"),
                input=[Message(role="user", content=content)],
                expected_output=expected.get("output"),
                assertions=assertions,
                timeout_ms=timeout,
                retries=retries,
                tags=tag_list(raw.get("tags") or metadata.get("tags")),
                category=metadata.get("category"),
                metadata={**metadata, "strategy": strategy},
                source_file=str(self.doc.file),
                source_line=self.doc.line_of(path),
            )
        except ValidationError as exc:
            self.error(path, str(exc.errors()[0]["msg"]))
            return None

    @staticmethod
    def default_strategy(profile: str, expected: dict[str, Any]) -> str:
        if profile == "deterministic" and "output" not in expected and "jsonSchema" in expected:
            return "json_schema"
        return PROFILE_STRATEGY.get(profile, "exact_match")


def _settings(loader: "_Loader", raw: dict[str, Any]) -> tuple[Settings, int]:
    """Seed 000 ``settings`` (and our ``trials``) as run settings.

    ``parallelExecution: false`` runs one case at a time; ``failFast`` stops after the
    first failing case; ``retryFailed`` re-runs a failing case (its ``retryCount`` wins).
    """
    concurrency = raw.get("maxConcurrentTests")
    if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                    or concurrency < 1):
        loader.error(("settings", "maxConcurrentTests"), f"invalid value {concurrency!r}", "a positive integer")
        concurrency = None
    if raw.get("parallelExecution") is False:
        concurrency = 1
    trials = raw.get("trials", 1)
    if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= 1000:
        loader.error(("settings", "trials"), f"invalid trials {trials!r}", "an integer from 1 to 1000")
        trials = 1
    for key in ("failFast", "retryFailed", "parallelExecution"):
        if key in raw and not isinstance(raw[key], bool):
            loader.error(("settings", key), f"got {raw[key]!r}", "true or false")
    timeout = loader.timeout_ms(raw.get("defaultTimeout"), ("settings", "defaultTimeout")) or 30_000
    settings = Settings(timeout_ms=timeout, max_concurrency=concurrency,
                        fail_fast=raw.get("failFast") is True,
                        rerun_failed=RETRY_FAILED_RERUNS if raw.get("retryFailed") is True else 0)
    return settings, trials


def load_skill_tests(doc: Document) -> tuple[Suite, list[str]]:
    data = doc.data
    v1 = is_v1(data)
    loader = _Loader(doc, v1)
    warnings: list[str] = []
    if v1:
        tests = data["tests"] if isinstance(data, dict) else data
        if not isinstance(tests, list) or not tests:
            raise SpecErrors.single(doc.file, "no tests", path=("tests",) if isinstance(data, dict) else (),
                                    line=1, expected="a non-empty list of v1 tests")
        for i, test in enumerate(tests):
            if isinstance(test, dict):
                loader.unknown((i,), test, V1_KEYS)
                if not isinstance(test.get("input"), str):
                    loader.error((i, "input"), "required field is missing" if "input" not in test
                                 else "invalid input", "a string")
        if loader.errors:
            raise SpecErrors(loader.errors)
        data = v1_to_v2(data)
        warnings.append(f"{doc.file}: v1 tests.json converted to v2 (eval-pipelines convert writes it)")
    if not isinstance(data, dict):
        raise SpecErrors.single(doc.file, f"top level is {type(data).__name__}", line=1,
                                expected="an EvalConfigV2 object or a v1 list of tests")
    if not v1:
        loader.unknown((), data, V2_KEYS)
        if str(data.get("version")) not in ("2.0", "2"):
            loader.error(("version",), f"unsupported version {data.get('version')!r}", '"2.0"')
    if not v1 and (missing := missing_profile(doc, data, PROFILES)) is not None:
        loader.errors.append(missing)
    warnings.extend(rubric_weight_warnings(doc, data))
    profile = data.get("profile", "deterministic")
    if profile not in PROFILES:
        loader.error(("profile",), f"unknown profile {profile!r}", "one of " + ", ".join(PROFILES))
        profile = "deterministic"
    raw_settings = loader.mapping(data.get("settings"), ("settings",), SETTINGS_KEYS)
    settings, trials = _settings(loader, raw_settings)
    workspace = None
    if data.get("setup") or data.get("teardown"):
        setup = loader.mapping(data.get("setup"), ("setup",), SETUP_KEYS)
        teardown = loader.mapping(data.get("teardown"), ("teardown",), TEARDOWN_KEYS)
        try:
            if setup.get("dependencies"):
                warnings.append(accepted_not_used(doc, ("setup", "dependencies"), (
                    "dependencies are not installed; the setup script and the targets run with the "
                    "tools already present")))
            workspace = Workspace(
                setup=WorkspaceScript(script=setup.get("script"), environment=setup.get("environment") or {})
                if setup else None,
                teardown=WorkspaceScript(script=teardown.get("script")) if teardown else None,
                dependencies=list(setup.get("dependencies") or []),
            )
        except ValidationError as exc:
            loader.errors.extend(pydantic_errors(doc, ("setup",), exc))
    groups = data.get("suites") or []
    if groups and not (isinstance(groups, list) and all(
            isinstance(g, dict) and isinstance(g.get("testIds"), list) for g in groups)):
        loader.error(("suites",), "invalid suites", "a list of {name, testIds, runInSequence}")
        groups = []
    raw_cases = data.get("testCases")
    if not isinstance(raw_cases, list) or not raw_cases:
        loader.error(("testCases",), "required field is missing" if raw_cases is None else "no test cases",
                     "a non-empty list of test cases")
        raw_cases = []
    cases = [c for i, raw in enumerate(raw_cases) if (c := loader.case(raw, i, profile)) is not None]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            loader.error(("testCases",), f"duplicate test id {case.id!r}")
        seen.add(case.id)
    known_ids = {case.id for case in cases}
    if any(group.get("runInSequence") is True for group in groups):
        # Cases run in file order, one at a time per target: a group asking for its
        # sequence gets it (the whole suite is sequential, not only that group).
        settings.max_concurrency = 1
    for g_index, group in enumerate(groups):
        loader.unknown(("suites", g_index), group, SUITE_GROUP_KEYS)
        for t_index, test_id in enumerate(group["testIds"]):
            if test_id not in known_ids:
                loader.error(("suites", g_index, "testIds", t_index), f"unknown test id {test_id!r}")
        for case in cases:
            if case.id in group["testIds"]:
                case.metadata.setdefault("suites", []).append(group.get("name"))
    if loader.errors:
        raise SpecErrors(loader.errors)
    suite = Suite(
        name=doc.file.parent.name if doc.file.parent.name != "eval" else doc.file.parent.parent.name,
        format="skill-tests-v1" if v1 else "skill-tests-v2",
        source_file=str(doc.file),
        profile=profile,
        settings=settings,
        execution=Execution(trials=Trials(count=trials)),
        workspace=workspace,
        tests=cases,
    )
    return suite, warnings
