"""The user documentation stays executable.

Convention for fenced code blocks in the docs (the info string after the
opening fence):

* ``bash runnable`` / ``python runnable``: executed, in document order, in a
  scratch copy of the project (``skills/``, ``datasets/``, ``targets.yaml``,
  ``dagster.yaml``, ``workspace.yaml``; ``.venv`` linked to this one), with
  ``DAGSTER_HOME`` set to the copy and no ``OPENAI_*`` / ``EVAL_PIPELINES_*`` /
  ``DAGSTER_*`` variables from the caller. A block must exit 0 (bash runs with
  ``-euo pipefail``). ``requires=node`` skips a block when the program is not
  on ``PATH``.
* ``file=PATH``: the block's text is written to ``PATH`` in the scratch copy
  before the blocks that follow run (scripts, suites, SKILL.md files).
* ``suite``: the block is a complete suite file (YAML or JSON) and must load
  with the real loader. With ``file=`` it loads from that path, so relative
  script and dataset references resolve as they would for a user.

docs/assertions.md's ``yaml suite`` blocks are checked by
tests/docs/test_assertions_doc.py and skipped here; SQL blocks are checked by
tests/docs/test_sql_doc.py. On top of the blocks, every suite file the docs name by
path, and every bundled skill package, must load.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_skill, load_suite
from eval_pipelines.suite.package import SUITE_CANDIDATES
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.run.targets.config import load_targets_file

PROJECT = Path(__file__).resolve().parents[2]
COVERED_ELSEWHERE = {"docs/assertions.md"}
DOCS = sorted(
    p.relative_to(PROJECT).as_posix()
    for p in [PROJECT / "README.md", *PROJECT.glob("docs/**/*.md"), *PROJECT.glob("skills/*/README.md")]
    if p.relative_to(PROJECT).as_posix() not in COVERED_ELSEWHERE
)
# Docs a new user follows: they must contain runnable blocks.
MUST_RUN = ("docs/evaluation-guide.md", "docs/custom-scripts.md")
BLOCK_TIMEOUT_S = 180

_OPEN = re.compile(r"^(`{3,})([^`\n]*)$")


@dataclass
class Block:
    doc: str
    line: int
    lang: str
    flags: set[str]
    options: dict[str, str]
    text: str = ""

    @property
    def label(self) -> str:
        return f"{self.doc}:{self.line}"


@dataclass
class Doc:
    path: str
    blocks: list[Block] = field(default_factory=list)


def parse(doc: str) -> Doc:
    lines = (PROJECT / doc).read_text(encoding="utf-8").splitlines()
    out, i = Doc(doc), 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).split()
        lang = info[0] if info else ""
        flags = {w for w in info[1:] if "=" not in w}
        options = dict(w.split("=", 1) for w in info[1:] if "=" in w)
        start, body = i, []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{doc}:{start + 1}: unclosed code block"
        out.blocks.append(Block(doc, start + 1, lang, flags, options, "\n".join(body) + "\n"))
        i += 1
    return out


PARSED = {doc: parse(doc) for doc in DOCS}
RUNNABLE_DOCS = [d for d in DOCS if any("runnable" in b.flags for b in PARSED[d].blocks)]
SUITE_BLOCKS = [b for d in DOCS for b in PARSED[d].blocks if "suite" in b.flags]


def scratch_project(tmp: Path) -> tuple[Path, dict[str, str]]:
    root = tmp / "project"
    root.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", ".data", ".dagster")
    for name in ("skills", "datasets"):
        shutil.copytree(PROJECT / name, root / name, ignore=ignore)
    for name in ("targets.yaml", "dagster.yaml", "workspace.yaml"):
        shutil.copy(PROJECT / name, root / name)
    (root / ".venv").symlink_to(PROJECT / ".venv")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("EVAL_PIPELINES_", "DAGSTER_", "OPENAI_"))}
    env["DAGSTER_HOME"] = str(root)
    env["TMPDIR"] = str(tmp)
    return root, env


def test_convention_is_used() -> None:
    for doc in MUST_RUN:
        assert doc in RUNNABLE_DOCS, f"{doc} has no runnable block"
    assert SUITE_BLOCKS, "no suite block in the docs"
    for doc in DOCS:
        for block in PARSED[doc].blocks:
            unknown = block.flags - {"runnable", "suite"}
            assert not unknown, f"{block.label}: unknown flag(s) {sorted(unknown)} in the info string"
            assert set(block.options) <= {"file", "requires"}, f"{block.label}: unknown option(s)"
            if "runnable" in block.flags:
                assert block.lang in ("bash", "python"), f"{block.label}: runnable needs bash or python"


def _run_doc(doc: str, tmp_path: Path) -> None:
    root, env = scratch_project(tmp_path)
    ran = 0
    for block in PARSED[doc].blocks:
        if "file" in block.options:
            target = (root / block.options["file"]).resolve()
            assert target.is_relative_to(root), f"{block.label}: file= leaves the project"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
            if block.text.startswith("#!"):
                target.chmod(0o755)
        if "runnable" not in block.flags:
            continue
        needed = block.options.get("requires")
        if needed and shutil.which(needed) is None:
            continue
        argv = (["bash", "-euo", "pipefail", "-c", block.text] if block.lang == "bash"
                else [str(root / ".venv" / "bin" / "python"), "-c", block.text])
        proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
        assert proc.returncode == 0, (
            f"{block.label}: exit {proc.returncode}\n--- block ---\n{block.text}"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")
        assert "Traceback" not in proc.stderr or block.lang == "python", f"{block.label}:\n{proc.stderr[-4000:]}"
        ran += 1
    assert ran, f"{doc}: no runnable block ran"


FAST_DOCS = [d for d in RUNNABLE_DOCS if d != "docs/evaluation-guide.md"]


@pytest.mark.parametrize("doc", FAST_DOCS)
def test_runnable_blocks(doc: str, tmp_path: Path) -> None:
    _run_doc(doc, tmp_path)


@pytest.mark.timeout(600)
def test_evaluation_guide_runs(tmp_path: Path) -> None:
    """The guide's walk from a new skill folder to SQL and the HTML report, block by block."""
    _run_doc("docs/evaluation-guide.md", tmp_path)


@pytest.mark.parametrize("block", SUITE_BLOCKS, ids=[b.label for b in SUITE_BLOCKS])
def test_suite_block_loads(block: Block, tmp_path: Path) -> None:
    if "file" in block.options:
        # Loaded where the doc puts it, with the sibling files the same doc writes.
        root, _ = scratch_project(tmp_path)
        for other in PARSED[block.doc].blocks:
            if "file" in other.options:
                target = root / other.options["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(other.text, encoding="utf-8")
        file = root / block.options["file"]
        policy = PathPolicy(datasets_dir=root / "datasets")
    else:
        file = tmp_path / ("suite.json" if block.lang == "json" else "eval.yaml")
        file.write_text(block.text, encoding="utf-8")
        policy = PathPolicy(datasets_dir=PROJECT / "datasets")
    try:
        suite, _ = load_suite(file, policy)
    except SpecErrors as exc:
        pytest.fail(f"{block.label}: suite does not load:\n{exc}")
    assert suite.tests, f"{block.label}: suite has no tests"


def _named_suite_files() -> list[str]:
    names = {Path(c).name for c in SUITE_CANDIDATES} | {"meeting_notes.yaml"}
    found = set()
    for doc in DOCS:
        for ref in re.findall(r"`((?:skills|datasets)/[^`\s]+)`", (PROJECT / doc).read_text(encoding="utf-8")):
            path = PROJECT / ref
            if path.is_file() and path.name in names:
                found.add(ref)
    return sorted(found)


NAMED = _named_suite_files()


@pytest.mark.parametrize("ref", NAMED)
def test_named_suite_file_loads(ref: str) -> None:
    file = PROJECT / ref
    policy = PathPolicy(datasets_dir=PROJECT / "datasets")
    try:
        load_suite(file, policy)
    except SpecErrors as exc:
        pytest.fail(f"{ref} (named in the docs) does not load:\n{exc}")


PACKAGES = sorted(p.parent.relative_to(PROJECT).as_posix() for p in PROJECT.glob("skills/*/*/SKILL.md"))


@pytest.mark.parametrize("package", PACKAGES)
def test_bundled_skill_loads(package: str, tmp_path: Path) -> None:
    project_targets = {t.name: t for t in load_targets_file(PROJECT / "targets.yaml")}
    loaded = load_skill(PROJECT / package, datasets_dir=PROJECT / "datasets", extract_dir=tmp_path,
                        project_targets=project_targets)
    assert loaded.suite.tests
    # Offline: every bundled skill runs against its own command or replay target, or an agent whose
    # model is a scripted stand-in.
    targets = [loaded.targets[name] for name in loaded.suite.execution.targets]
    online = [t.name for t in targets if t.type not in ("command", "replay")
              and not (t.type == "agent" and t.script)]
    assert not online, f"{package} needs a network target: {online}"
    # ... and says how to run it against a real model.
    readme = PROJECT / package.rsplit("/", 1)[0] / "README.md"
    if package.split("/")[1] not in ("string-reverse", "tiny-model-replay"):
        assert readme.is_file(), f"{readme} missing"
        assert "--target default" in readme.read_text(encoding="utf-8")


def test_every_profile_has_an_example_with_two_versions(tmp_path: Path) -> None:
    profiles: dict[str, set[str]] = {}
    formats: set[str] = set()
    for package in PACKAGES:
        loaded = load_skill(PROJECT / package, datasets_dir=PROJECT / "datasets", extract_dir=tmp_path / package,
                            project_targets={t.name: t for t in load_targets_file(PROJECT / "targets.yaml")})
        formats.add(loaded.suite.format.split("-v")[0])
        readme = PROJECT / package.rsplit("/", 1)[0] / "README.md"
        text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
        m = re.search(r"— (\w+) profile", text)
        profile = loaded.suite.profile or (m.group(1) if m else None)
        if m:
            profile = m.group(1)
        if profile:
            profiles.setdefault(profile, set()).add(package)
    for profile in ("deterministic", "structured", "flexible", "creative", "enterprise"):
        skills = {p.split("/")[1] for p in profiles.get(profile, set())}
        assert any(sum(1 for p in profiles[profile] if p.split("/")[1] == s) >= 2 for s in skills), (
            f"no {profile} example with two versions: {profiles.get(profile)}")
    assert {"skill-tests", "eval-yaml", "harness", "prompt-modes"} <= formats, formats


def test_shlex_safe_file_options() -> None:
    for doc in DOCS:
        for block in PARSED[doc].blocks:
            if "file" in block.options:
                assert shlex.split(block.options["file"]) == [block.options["file"]], block.label
