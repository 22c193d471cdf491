"""Load any supported suite file, or a whole skill package, into the internal model."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loaders.eval_yaml import load_eval_yaml
from eval_pipelines.spec.loaders.harness import is_harness, load_harness
from eval_pipelines.spec.models import Suite
from eval_pipelines.spec.package import SkillPackage, find_suite_file, inside_package, open_package
from eval_pipelines.spec.paths import PathPolicy
from eval_pipelines.spec.loaders.prompt_modes import is_prompt_modes, load_prompt_modes
from eval_pipelines.spec.loaders.skill_tests import load_skill_tests
from eval_pipelines.spec.source import Document, load_document
from eval_pipelines.run.targets.config import OpenAITargetConfig, TargetConfig, load_targets_file


def detect_format(doc: Document) -> str:
    data = doc.data
    if doc.file.name == "tests.json":
        return "skill-tests"
    if is_prompt_modes(data):
        return "prompt-modes"
    if is_harness(data):
        return "harness"
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
    for candidate in (package.root / "targets.yaml", package.root / "eval" / "targets.yaml"):
        if candidate.is_file():
            for config in load_targets_file(inside_package(package.root, candidate)):
                targets[config.name] = config
    bind_targets(suite, suite_file, targets, own=[n for n in targets if n not in (project_targets or {})])
    return LoadedSkill(package, suite, targets, warnings)


def bind_targets(suite: Suite, suite_file: Path, targets: dict[str, TargetConfig], own: list[str]) -> None:
    """Pick the suite's targets and judge among ``targets``; refuse names that are not defined.

    With no ``execution.targets`` the suite runs against the targets its own
    targets.yaml defines (``own``), else the one named ``default``.
    """
    if not suite.execution.targets:
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
