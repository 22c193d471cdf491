"""Load any supported suite file, or a whole skill package, into the internal model."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.errors import UNUSED_PREFIX, SpecErrors
from eval_pipelines.suite.judge_scripts import judge_script_errors
from eval_pipelines.formats.agentv.assertions import one_lookup_per_type
from eval_pipelines.formats.agentv.head import load_eval_yaml_head
from eval_pipelines.formats.agentv.v5 import is_agentv_v5, load_agentv_v5
from eval_pipelines.formats.eval_yaml.loader import load_eval_yaml
from eval_pipelines.formats.harness.loader import is_harness, load_harness
from eval_pipelines.suite.models import Suite
from eval_pipelines.suite.package import SkillPackage, inside_package, open_package, suite_files
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.formats.prompt_modes.loader import is_prompt_modes, load_prompt_modes
from eval_pipelines.formats.skills.evals_json import (is_skill_evals, load_skill_evals,
                                                        refuse_files_for_chat_targets)
from eval_pipelines.formats.skill_tests.loader import load_skill_tests
from eval_pipelines.suite.source import Document, load_document, read_text
from eval_pipelines.run.targets.key_policy import withheld_key_reason
from eval_pipelines.run.targets.config import (AgentTargetConfig, ClaudeCodeTargetConfig, OpenAITargetConfig,
                                               ScriptedJudgeConfig,
                                               TargetConfig, TargetsFile,
                                               load_targets_file, mark_declared_by, refuse_declared_by)

# What may grade: an OpenAI-compatible model, or the deterministic stand-in for one.
JUDGE_CONFIGS = (OpenAITargetConfig, ScriptedJudgeConfig)
PROMPTFOO_KEYS = {"prompts", "providers", "defaultTest", "scenarios", "evaluateOptions"}


def is_promptfoo(doc: Document) -> bool:
    """A promptfoo config: by its file name, or by promptfoo's own top-level fields."""
    if doc.file.name.lower().startswith("promptfooconfig"):
        return True
    data = doc.data
    return isinstance(data, dict) and bool(PROMPTFOO_KEYS & data.keys()) and (
        "tests" in data or "scenarios" in data)


def detect_format(doc: Document) -> str:
    data = doc.data
    if doc.file.name == "tests.json":
        return "skill-tests"
    if doc.file.name.lower().startswith("promptfooconfig"):
        return "promptfoo"
    if is_prompt_modes(data):
        return "prompt-modes"
    if isinstance(data, dict) and "test_cases" in data and is_skill_evals(doc):
        return "agent-skills-evals"  # skill-creator evals under `test_cases` (the harness's key too)
    if is_harness(data):
        return "harness"
    if is_skill_evals(doc):
        return "agent-skills-evals"  # skill-creator's evals/evals.json
    if is_agentv_v5(data):
        return "agentv-v5"
    if is_promptfoo(doc):
        return "promptfoo"
    if isinstance(data, dict) and "testCases" in data:
        return "skill-tests"
    if doc.file.suffix.lower() == ".json" and (isinstance(data, list) or "tests" not in (data or {})):
        return "skill-tests"  # a v1 list of tests, or a v2 file missing its testCases
    return "eval-yaml"


def load_suite(file: Path, policy: PathPolicy | None = None) -> tuple[Suite, list[str]]:
    """Parse and validate one suite file; raises :class:`SpecErrors` listing every problem."""
    with one_lookup_per_type():
        suite, warnings = _load_suite(file, policy or PathPolicy())
    if errors := judge_script_errors(suite):
        raise SpecErrors(errors)
    return suite, warnings + unused_assertion_params(suite)


def unused_assertion_params(suite: Suite) -> list[str]:
    """One "accepted, not used" warning per assertion parameter a grader cannot apply
    (``Grader.unused_params``), naming how many tests set it and the first of them."""
    from eval_pipelines.grading.registry import get_grader

    found: dict[tuple[str, str], list[str]] = {}

    def visit(kind: str, config: dict[str, Any], test_id: str) -> None:
        grader = get_grader(kind)
        for name in getattr(grader, "unused_params", {}):
            if name in config:
                found.setdefault((grader.type, name), []).append(test_id)
        for nested in config.get("assert") or []:  # composite: nested assertions as raw mappings
            if isinstance(nested, dict) and isinstance(nested.get("type"), str):
                visit(nested["type"], nested, test_id)

    for case in suite.tests:
        for assertion in case.assertions:
            visit(assertion.type, assertion.config, case.id)
    out = []
    for (kind, name), tests in found.items():
        reason = get_grader(kind).unused_params[name]
        out.append(f"{UNUSED_PREFIX}assert {kind}.{name}: {reason} ({len(tests)} test(s), first "
                   f"{tests[0]!r}; {suite.source_file})")
    return out


def _load_suite(file: Path, policy: PathPolicy) -> tuple[Suite, list[str]]:
    if file.suffix.lower() == ".jsonl" or file.suffix.lower() == ".csv":
        # Sidecar convention: a dataset run on its own, with an optional YAML beside it.
        sidecar = next((file.with_suffix(s) for s in (".yaml", ".yml") if file.with_suffix(s).is_file()), None)
        base: dict[str, object] = {}
        if sidecar is not None:
            side = load_document(sidecar)
            base = dict(side.data) if isinstance(side.data, dict) else {}
        base["tests"] = file.name
        return load_eval_yaml(Document(sidecar or file, base, {}), policy)
    doc = load_document(file)
    kind = detect_format(doc)
    try:
        if kind == "skill-tests":
            return load_skill_tests(doc)
        if kind == "prompt-modes":
            return load_prompt_modes(doc)
        if kind == "harness":
            return load_harness(doc, policy)
        if kind == "agent-skills-evals":
            return load_skill_evals(doc, policy)
        if kind == "agentv-v5":
            return load_agentv_v5(doc, policy)
        if kind == "promptfoo":
            # promptfoo's loader (its assertion table, red-team graders): imported for its suites only
            from eval_pipelines.formats.promptfoo.config import load_promptfoo

            return load_promptfoo(doc, policy)
        return load_eval_yaml_head(doc, policy)  # v2's names, or AgentV HEAD's later ones
    except (ValueError, OverflowError) as exc:
        # A value a loader did not check field by field (pydantic's ValidationError
        # is a ValueError; int() of NaN or 1e400 raises these): one line, never a traceback.
        message = str(exc).splitlines()
        detail = " ".join(line.strip() for line in message[:3]) if message else type(exc).__name__
        raise SpecErrors.single(file, f"invalid value: {detail}") from None


@dataclass
class LoadedSkill:
    package: SkillPackage
    suite: Suite
    targets: dict[str, TargetConfig]
    warnings: list[str] = field(default_factory=list)


def load_skill(
    source: Path,
    *,
    datasets_dir: Path | None,
    extract_dir: Path,
    project_targets: dict[str, TargetConfig] | None = None,
) -> LoadedSkill:
    """Open a package, load its suite, and resolve the targets it will run against."""
    package = open_package(source, extract_dir)
    suite_file, *others = suite_files(package.root)
    # A file the suite names itself (promptfoo's `file://prompt.json`, a harness `$ref`) is part of it.
    text = read_text(suite_file)
    others = [p for p in others if os.path.relpath(p, suite_file.parent) not in text and p.name not in text]
    if others:
        # Running one and ignoring the rest loses the author's other tests; merging suites of
        # different formats would mix their settings, gates and judges: one suite per package.
        rel = [str(p.relative_to(package.root)) for p in (suite_file, *others)]
        raise SpecErrors.single(package.root, f"several suite files: {' and '.join(rel)}",
                                expected="one suite file per skill package (merge the tests into one, "
                                "or move the others out of the package)")
    # The plugin layout's evals sit at the repository root, beside `skills/<name>/`: their files are read there.
    roots = (package.root,) if suite_file.is_relative_to(package.root) else (package.root, suite_file.parent.parent)
    policy = PathPolicy(allowed_roots=roots, datasets_dir=datasets_dir)
    suite, warnings = load_suite(suite_file, policy)
    if suite.name in (suite_file.stem, suite_file.parent.name, suite_file.parent.parent.name):
        suite.name = package.name  # the suite named itself after a file or folder: use the skill's name
    if suite.system_prompt is None:  # a prompt-mode suite brings its own
        suite.system_prompt = package.body or None
    if suite.version is None:
        suite.version = package.version
    targets = dict(project_targets or {})
    # The package's own targets, by name: also when the project's targets file is this very
    # file (`eval-pipelines run .` inside a skill folder), they are still the skill's own.
    own: list[str] = []
    own_targets = suite_targets(suite, suite_file)
    for candidate in (package.root / "targets.yaml", package.root / "eval" / "targets.yaml"):
        if candidate.is_file():
            for config in load_targets_file(inside_package(package.root, candidate), declared_by="suite"):
                # The package's file is the project's own (`run .` inside a skill folder): the operator's.
                operator = mark_declared_by(config, "operator")
                targets[config.name] = operator if targets.get(config.name) == operator else config
                own.append(config.name)
    for config in own_targets:  # the suite's own providers; a target of the same name in targets.yaml wins
        targets.setdefault(config.name, config)
        own.append(config.name)
    bind_targets(suite, suite_file, targets, own=own)
    refuse_files_for_chat_targets(suite, targets)
    warnings += _unused_by_targets(suite, targets) + withheld_key_warnings(suite, targets)
    return LoadedSkill(package, suite, targets, warnings)


def bind_targets(suite: Suite, suite_file: Path, targets: dict[str, TargetConfig], own: list[str]) -> None:
    """Pick the suite's targets and judge among ``targets``; refuse names that are not defined.

    With no ``execution.targets`` the suite runs against the targets it defines itself
    (``own``: its targets.yaml, its providers), else the one named ``default``. The judge
    grades; it is never also a system under test (calls doubled, rates distorted).
    """
    if not suite.execution.targets:
        judge_names = {suite.judge or "judge"}
        systems = [n for n in dict.fromkeys(own) if n not in judge_names]
        suite.execution.targets = systems or (["default"] if "default" in targets.keys() - judge_names else [])
    if suite.judge is None:
        suite.judge = next((n for n in ("judge", "default") if isinstance(targets.get(n), JUDGE_CONFIGS)), None)
    elif not isinstance(targets.get(suite.judge), JUDGE_CONFIGS):
        raise SpecErrors.single(suite_file, f"judge {suite.judge!r} is not an OpenAI-compatible target",
                                path=("judge",), expected="the name of a `type: openai` (or `scripted_judge`) target")
    stand_ins = sorted(n for n in suite.execution.targets if isinstance(targets.get(n), ScriptedJudgeConfig))
    if stand_ins:
        raise SpecErrors.single(suite_file, f"target(s) {stand_ins} are scripted judges, not systems under test",
                                path=("execution", "targets"), expected="targets that answer cases")
    missing = sorted({n for case in suite.tests for n in suite.targets_for(case)} - targets.keys())
    if missing or not suite.execution.targets:
        raise SpecErrors.single(
            suite_file,
            f"unknown target(s) {missing}" if missing else "no target to run against",
            path=("execution", "targets"),
            expected="names defined in targets.yaml: " + ", ".join(sorted(targets)) if targets
            else "a targets.yaml defining at least one target",
        )
    if suite.judge is None and suite.format == "promptfoo":  # promptfoo grades with its default provider
        from eval_pipelines.formats.promptfoo.providers import PROMPTFOO_GRADER, PROMPTFOO_GRADER_CONFIG

        targets[PROMPTFOO_GRADER] = OpenAITargetConfig.model_validate(PROMPTFOO_GRADER_CONFIG)
        suite.judge = PROMPTFOO_GRADER


def withheld_key_warnings(suite: Suite, targets: dict[str, TargetConfig]) -> list[str]:
    """A stored warning for each target or judge whose key will not be sent (key_policy.py)."""
    used = sorted({n for case in suite.tests for n in suite.targets_for(case)} | ({suite.judge} - {None}))
    configs = [(n, targets[n]) for n in used
               if isinstance(targets.get(n), (OpenAITargetConfig, AgentTargetConfig, ClaudeCodeTargetConfig))]
    return [f"target {name}: {reason}" for name, config in configs
            if (reason := withheld_key_reason(config, os.environ)) is not None]


def _unused_by_targets(suite: Suite, targets: dict[str, TargetConfig]) -> list[str]:
    """Seed 002 ``model`` and ``expectedSchema`` reach OpenAI-compatible targets only."""
    systems = {n for case in suite.tests for n in suite.targets_for(case)}
    other = sorted(n for n in systems if not isinstance(targets.get(n), OpenAITargetConfig))
    if not other:
        return []
    where = f"({suite.source_file})"
    fields = [("model", suite.model), ("expectedSchema", suite.response_schema)]
    return [f"{UNUSED_PREFIX}{name}: target(s) {', '.join(other)} are not OpenAI-compatible and cannot "
            f"take it {where}" for name, value in fields if value]


def suite_targets(suite: Suite, suite_file: Path) -> list[TargetConfig]:
    """The targets a suite file defines itself (promptfoo providers), validated as targets.yaml
    entries; they are the suite's (``declared_by: suite``), so their keys go only to trusted hosts."""
    if not suite.target_configs:
        return []
    refuse_declared_by(suite.target_configs, lambda i: SpecErrors.single(
        suite_file, "`declared_by` is not written in a suite", path=("providers", i, "declared_by"),
        expected="no `declared_by`: a suite's providers are the suite's"))
    try:
        parsed = TargetsFile.model_validate({"targets": suite.target_configs}).targets
        return [mark_declared_by(t, "suite") for t in parsed]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SpecErrors.single(suite_file, f"provider cannot be a target: {first['msg']}",
                                path=("providers",), expected="an OpenAI-compatible, echo, exec: or .py provider")
