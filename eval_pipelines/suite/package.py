"""Skill packages: a folder or ``.zip`` with ``SKILL.md`` and an eval suite.

A skill version is ``name@version`` (front matter ``version``, else ``h-`` and a
short content hash). That key becomes a Dagster partition, so it is validated
here: Dagster itself accepts keys with ``|`` or newlines, and ``|`` is the
multi-partition delimiter.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.suite.source import parse_yaml, read_text

SKILL_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
SKILL_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
SUITE_CANDIDATES = (
    "eval.yaml", "eval.yml", "eval/eval.yaml", "eval/eval.yml",  # seed 001
    "eval/tests.json", "tests.json",  # seed 000 (v2, v1)
    "evals/eval-suite.yaml", "eval-suite.yaml", "eval/eval-suite.yaml",  # seed 003
    "prompt.json", "prompt.yaml", "eval/prompt.json",  # seed 002
    "promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json",  # promptfoo
    "eval/promptfooconfig.yaml", "evals/promptfooconfig.yaml",
    "suite.yaml", "evals/suite.yaml",  # AgentV v5
    "evals.json",  # Agent Skills packages that keep skill-creator's evals beside SKILL.md
)
# How deep under a repository root the plugin layout's SKILL.md is looked for (skills/<name>/SKILL.md is 2).
PLUGIN_SKILL_DEPTH = 3
# Not the skill's content: caches, VCS, and this tool's own outputs (`.data`: the DuckDB file
# and reports, `.dagster`: the instance) when a skill folder is also the project folder
# (`eval-pipelines run .` inside it); hashing them would change the version on every run.
IGNORED_PARTS = {"__pycache__", ".git", ".DS_Store", ".data", ".dagster"}

MAX_ZIP_ENTRIES = 5_000
MAX_ZIP_TOTAL_BYTES = 200 * 1024 * 1024
MAX_ZIP_RATIO = 200


def partition_key_problem(key: str) -> str | None:
    """Why ``key`` cannot be a skill-version partition key, or None when it can."""
    name, sep, version = key.partition("@")
    if not sep:
        return f"{key!r} is not name@version"
    if not SKILL_NAME.fullmatch(name):
        return f"skill name {name!r} must be 1-64 lowercase letters, digits and inner hyphens"
    if not SKILL_VERSION.fullmatch(version):
        return f"version {version!r} must be 1-64 letters, digits, '.', '+', '_' or '-'"
    return None


@dataclass(frozen=True)
class SkillPackage:
    name: str
    version: str
    description: str
    body: str
    root: Path  # folder holding SKILL.md (extracted, for zips)
    source: Path  # what the user dropped in: the folder or the zip
    content_hash: str
    # The folder holding SKILL.md, what an agent target installs as the skill: ``root`` itself, except
    # for a plugin repository given at its root (evals at the root, the skill under skills/<name>/).
    skill_dir: Path | None = None

    @property
    def skill_folder(self) -> Path:
        return self.skill_dir or self.root

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


def find_packages(skills_dir: Path) -> list[Path]:
    """Folders holding ``SKILL.md`` (outermost only) and ``.zip`` files, sorted."""
    found: list[Path] = []
    if not skills_dir.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(skills_dir):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_PARTS and not d.startswith("."))
        here = Path(dirpath)
        if "SKILL.md" in filenames:
            found.append(here)
            dirnames[:] = []  # a package's own folders are not packages
            continue
        found.extend(here / f for f in sorted(filenames) if f.lower().endswith(".zip"))
    return sorted(found)


def folder_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if IGNORED_PARTS & set(path.relative_to(root).parts):
            continue
        if path.is_symlink():
            # Hash where a link points, never the content behind it: the target
            # may lie outside the package (it is hashed itself when inside).
            digest.update(path.relative_to(root).as_posix().encode() + b"\0->")
            digest.update(os.readlink(path).encode() + b"\0")
        elif path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def inside_package(root: Path, file: Path) -> Path:
    """``file``, refused when it is a link leading outside the package ``root``."""
    if not file.resolve().is_relative_to(root.resolve()):
        raise SpecErrors.single(file, f"links to {file.resolve()}, outside the skill package",
                                expected="files inside the package (links may only point inside it)")
    return file


def parse_front_matter(text: str, file: Path) -> tuple[dict[str, object], str]:
    if not text.startswith("---"):
        raise SpecErrors.single(file, "SKILL.md has no front matter", line=1,
                                expected="a '---' block with name and description")
    end = text.find("\n---", 3)
    if end < 0:
        raise SpecErrors.single(file, "front matter is not closed", line=1, expected="a closing '---' line")
    try:
        # The suite parser, with its bounds on depth, aliases and tags. The
        # front matter starts right after the first '---', so its lines are the file's.
        meta = parse_yaml(text[3:end], file).data
    except SpecErrors as exc:
        first = exc.errors[0]
        problem = first.message.removeprefix("invalid YAML: ")
        raise SpecErrors.single(file, f"invalid front matter YAML: {problem}", line=first.line) from None
    if not isinstance(meta, dict):
        raise SpecErrors.single(file, "front matter is not a mapping", line=2)
    body = text[end + 4:].lstrip("\n")
    return meta, body


def safe_extract(archive: Path, dest: Path) -> None:
    """Extract a zip refusing path traversal, links, bombs and oversized archives."""
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SpecErrors.single(archive, f"not a readable zip archive: {exc}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            raise SpecErrors.single(archive, f"{len(infos)} entries", expected=f"at most {MAX_ZIP_ENTRIES}")
        total = 0
        for info in infos:
            name = PurePosixPath(info.filename)
            if name.is_absolute() or ".." in name.parts or "\\" in info.filename or ":" in info.filename:
                raise SpecErrors.single(archive, f"unsafe path in archive: {info.filename!r}",
                                        expected="relative paths inside the package")
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SpecErrors.single(archive, f"symbolic link in archive: {info.filename!r}")
            total += info.file_size
            if info.compress_size and info.file_size / info.compress_size > MAX_ZIP_RATIO:
                raise SpecErrors.single(archive, f"{info.filename!r} expands {info.file_size // max(info.compress_size, 1)}x",
                                        expected=f"a compression ratio below {MAX_ZIP_RATIO} (zip bomb?)")
        if total > MAX_ZIP_TOTAL_BYTES:
            raise SpecErrors.single(archive, f"archive expands to {total} bytes",
                                    expected=f"at most {MAX_ZIP_TOTAL_BYTES}")
        tmp = dest.with_name(dest.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            written = 0
            for info in infos:
                target = tmp / info.filename
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    while chunk := src.read(1 << 16):
                        written += len(chunk)
                        if written > MAX_ZIP_TOTAL_BYTES:  # sizes in the header can lie
                            raise SpecErrors.single(archive, "archive expands beyond its declared size")
                        out.write(chunk)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise SpecErrors.single(archive, f"archive is damaged: {exc}") from None
        except SpecErrors:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)


def _package_root(extracted: Path, archive: Path) -> Path:
    if (extracted / "SKILL.md").is_file():
        return extracted
    children = [c for c in extracted.iterdir() if c.is_dir() and (c / "SKILL.md").is_file()]
    if len(children) == 1:
        return children[0]
    raise SpecErrors.single(archive, "no SKILL.md at the archive root or in its single top folder")


def open_package(source: Path, extract_dir: Path) -> SkillPackage:
    """Read a skill package (folder or zip); zips are extracted under ``extract_dir``."""
    if source.is_file() and source.suffix.lower() == ".zip":
        content_hash = hashlib.sha256(source.read_bytes()).hexdigest()
        dest = extract_dir / content_hash[:16]
        if not (dest / ".complete").exists():
            safe_extract(source, dest)
            (dest / ".complete").touch()
        root = _package_root(dest, source)
    elif source.is_dir():
        root = source
        content_hash = folder_hash(source)
        plugin = plugin_evals(source)
        if plugin is not None and not (source / "evals" / "evals.json").exists():
            # The plugin layout: the evals (and their files) are part of what a version is.
            content_hash = hashlib.sha256((content_hash + folder_hash(plugin.parent)).encode()).hexdigest()
    else:
        raise SpecErrors.single(source, "not a skill folder or .zip package")
    skill_dir = skill_folder(root)
    if skill_dir is None:
        raise SpecErrors.single(source, "SKILL.md not found", expected="SKILL.md at the package root (or, for a "
                                "plugin repository with evals at its root, one SKILL.md under skills/<name>/)")
    skill_md = skill_dir / "SKILL.md"
    inside_package(root, skill_md)
    meta, body = parse_front_matter(read_text(skill_md), skill_md)
    name = meta.get("name")
    if not isinstance(name, str) or not SKILL_NAME.fullmatch(name):
        raise SpecErrors.single(skill_md, f"invalid skill name {name!r}", path=("name",), line=2,
                                expected="1-64 lowercase letters, digits and inner hyphens")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SpecErrors.single(skill_md, "required field is missing", path=("description",), line=2,
                                expected="a non-empty string")
    raw_version = meta.get("version")
    if isinstance(raw_version, float):
        # YAML reads `version: 1.10` as the number 1.1; refuse instead of guessing.
        raise SpecErrors.single(skill_md, f"version {raw_version!r} was read as a number",
                                path=("version",), expected='a quoted string, e.g. version: "1.10"')
    version = str(raw_version) if raw_version is not None else f"h-{content_hash[:10]}"
    if not SKILL_VERSION.fullmatch(version):
        raise SpecErrors.single(skill_md, f"invalid version {version!r}", path=("version",),
                                expected="letters, digits, '.', '+', '_' or '-' (e.g. 1.2.0)")
    return SkillPackage(name, version, description.strip(), body, root, source, content_hash, skill_dir)


def find_suite_file(root: Path) -> Path:
    """The package's suite file: the first of ``SUITE_CANDIDATES`` (``suite_files`` lists all)."""
    return suite_files(root)[0]


def suite_files(root: Path) -> list[Path]:
    """Every suite file candidate present, in priority order; a broken link is an error, not "absent"."""
    found = []
    for candidate in SUITE_CANDIDATES:
        path = root / candidate
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SpecErrors.single(path, "symbolic link loop", expected="a suite file") from None
            if exc.errno == errno.ENOENT and os.path.islink(path):
                raise SpecErrors.single(path, f"dangling link to {os.readlink(path)}",
                                        expected="a suite file") from None
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                raise SpecErrors.single(path, f"cannot read: {exc.strerror}") from None
            continue
        if path.is_file():
            found.append(inside_package(root, path))
    # Agent Skills (skill-creator) keep their evals in evals/evals.json; AgentV names its
    # suites *.eval.yaml (evals/dataset.eval.yaml, ...): one of those is the package's suite.
    if (root / "evals" / "evals.json").is_file():
        found.append(inside_package(root, root / "evals" / "evals.json"))
    if not found:
        agentv = sorted(p for p in root.rglob("*.eval.yaml")
                        if not any(part.startswith(".") or part in IGNORED_PARTS for part in p.relative_to(root).parts))
        if len(agentv) > 1:
            raise SpecErrors.single(root, "several AgentV suites: "
                                    + ", ".join(str(p.relative_to(root)) for p in agentv),
                                    expected="one *.eval.yaml per skill package (or an eval.yaml naming the suite)")
        found += [inside_package(root, p) for p in agentv]
    if not found and (plugin := plugin_evals(root)) is not None:
        found.append(plugin)
    if not found:
        raise SpecErrors.single(root, "no eval suite found",
                                expected="one of " + ", ".join(SUITE_CANDIDATES)
                                + ", evals/evals.json or a single *.eval.yaml")
    return found


def plugin_evals(root: Path) -> Path | None:
    """A plugin repository's ``evals/evals.json`` for the skill at ``<repo>/skills/<name>/`` (``root``):
    the plugin layout, where the evals sit at the repository's root. It belongs to this skill when its
    ``skill_name`` names it, or when it names none and this is the repository's only skill."""
    import json

    if root.parent.name != "skills":
        return None
    evals = root.parent.parent / "evals" / "evals.json"
    if not evals.is_file() or evals.is_symlink():
        return None
    try:
        data = json.loads(evals.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return evals  # the loader reports what is wrong with it
    named = data.get("skill_name") if isinstance(data, dict) else None
    if isinstance(named, str):
        return evals if named == root.name or _skill_md_name(root) == named else None
    skills = [d for d in root.parent.iterdir() if (d / "SKILL.md").is_file()]
    return evals if skills == [root] else None


def skill_folder(root: Path) -> Path | None:
    """The folder holding the skill's SKILL.md: ``root`` when it holds one; for a plugin repository given
    at its root (``evals/evals.json`` or ``evals.json`` there, SKILL.md under ``skill/<name>/``,
    ``skills/<name>/``, ``plugins/<name>/``...), the SKILL.md within ``PLUGIN_SKILL_DEPTH`` folders whose
    folder or front-matter name is the evals' ``skill_name``, else the only SKILL.md there."""
    import json

    if (root / "SKILL.md").is_file():
        return root
    evals = next((e for e in (root / "evals" / "evals.json", root / "evals.json") if e.is_file()), None)
    if evals is None:
        return None
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        depth = len(here.relative_to(root).parts)
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_PARTS and not d.startswith("."))
        if depth >= PLUGIN_SKILL_DEPTH:
            dirnames[:] = []
        if "SKILL.md" in filenames and here != root:
            found.append(here)
    try:
        data = json.loads(evals.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    named = data.get("skill_name") if isinstance(data, dict) else None
    if isinstance(named, str):
        matched = [d for d in found if d.name == named or _skill_md_name(d) == named]
        if len(matched) == 1:
            return matched[0]
    return found[0] if len(found) == 1 else None


def _skill_md_name(root: Path) -> str | None:
    try:
        meta, _ = parse_front_matter(read_text(root / "SKILL.md"), root / "SKILL.md")
    except SpecErrors:
        return None
    return meta.get("name") if isinstance(meta.get("name"), str) else None
