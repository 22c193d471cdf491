"""Load any supported suite file, or a whole skill package, into the internal model."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loaders.agentv_v5 import is_agentv_v5, load_agentv_v5
from eval_pipelines.spec.loaders.eval_yaml import load_eval_yaml
from eval_pipelines.spec.loaders.promptfoo import load_promptfoo
from eval_pipelines.spec.loaders.harness import is_harness, load_harness
from eval_pipelines.spec.models import Suite
from eval_pipelines.spec.package import SkillPackage, find_suite_file, inside_package, open_package
from eval_pipelines.spec.paths import PathPolicy
from eval_pipelines.spec.loaders.prompt_modes import is_prompt_modes, load_prompt_modes
from eval_pipelines.spec.loaders.skill_tests import load_skill_tests
from eval_pipelines.spec.source import Document, load_document
from eval_pipelines.run.targets.config import OpenAITargetConfig, TargetConfig, TargetsFile, load_targets_file

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
    if is_harness(data):
        return "harness"
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
    policy = policy or PathPolicy()
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
    if kind == "skill-tests":
        return load_skill_tests(doc)
    if kind == "prompt-modes":
        return load_prompt_modes(doc)
    if kind == "harness":
        return load_harness(doc, policy)
    if kind == "agentv-v5":
        return load_agentv_v5(doc, policy)
    if kind == "promptfoo":
        return load_promptfoo(doc, policy)
    return load_eval_yaml(doc, policy)


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
    suite_file = find_suite_file(package.root)
    policy = PathPolicy(allowed_roots=(package.root,), datasets_dir=datasets_dir)
    suite, warnings = load_suite(suite_file, policy)
    if suite.name in (suite_file.stem, suite_file.parent.name, suite_file.parent.parent.name):
        suite.name = package.name  # the suite named itself after a file or folder: use the skill's name
    if suite.system_prompt is None:  # a prompt-mode suite brings its own
        suite.system_prompt = package.body or None
    if suite.version is None:
        suite.version = package.version
    targets = dict(project_targets or {})
    own_targets = _suite_targets(suite, suite_file)
    for candidate in (package.root / "targets.yaml", package.root / "eval" / "targets.yaml"):
        if candidate.is_file():
            for config in load_targets_file(inside_package(package.root, candidate)):
                targets[config.name] = config
    for config in own_targets:  # a target of the same name in targets.yaml wins
        targets.setdefault(config.name, config)
    if not suite.execution.targets:
        own = [n for n in targets if n not in (project_targets or {})]
        suite.execution.targets = own or (["default"] if "default" in targets else [])
    if suite.judge is None:
        suite.judge = next((n for n in ("judge", "default") if isinstance(targets.get(n), OpenAITargetConfig)), None)
    elif not isinstance(targets.get(suite.judge), OpenAITargetConfig):
        raise SpecErrors.single(suite_file, f"judge {suite.judge!r} is not an OpenAI-compatible target",
                                path=("judge",), expected="the name of a `type: openai` target")
    missing = sorted({n for case in suite.tests for n in suite.targets_for(case)} - targets.keys())
    if missing or not suite.execution.targets:
        raise SpecErrors.single(
            suite_file,
            f"unknown target(s) {missing}" if missing else "no target to run against",
            path=("execution", "targets"),
            expected="names defined in targets.yaml: " + ", ".join(sorted(targets)) if targets
            else "a targets.yaml defining at least one target",
        )
    return LoadedSkill(package, suite, targets, warnings)


def _suite_targets(suite: Suite, suite_file: Path) -> list[TargetConfig]:
    """The targets a suite file defines itself (promptfoo providers), validated as targets.yaml entries."""
    if not suite.target_configs:
        return []
    try:
        return TargetsFile.model_validate({"targets": suite.target_configs}).targets
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SpecErrors.single(suite_file, f"provider cannot be a target: {first['msg']}",
                                path=("providers",), expected="an OpenAI-compatible, echo, exec: or .py provider")
