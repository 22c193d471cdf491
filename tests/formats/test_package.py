"""Skill packages: SKILL.md front matter, versions, partition keys, zips, discovery."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_skill
from eval_pipelines.suite.package import (
    find_packages,
    find_suite_file,
    open_package,
    parse_front_matter,
    partition_key_problem,
    safe_extract,
)

SKILL_MD = """\
---
name: calc
description: Adds numbers.
version: 1.2.0
---
# Calculator

Answer with the number only.
"""

EVAL_YAML = "tests:\n  - id: add\n    input: 2+2\n    assert:\n      - type: equals\n        value: '4'\n"
TARGETS_YAML = "targets:\n  - name: echo\n    type: command\n    command: [python, echo.py]\n"


def make_skill(root: Path, skill_md: str = SKILL_MD, **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(skill_md, encoding="utf-8")
    for name, text in files.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


# ---- front matter --------------------------------------------------------------

def test_front_matter_parsed_and_body_kept(tmp_path: Path) -> None:
    meta, body = parse_front_matter(SKILL_MD, tmp_path / "SKILL.md")
    assert meta == {"name": "calc", "description": "Adds numbers.", "version": "1.2.0"}
    assert body == "# Calculator\n\nAnswer with the number only.\n"


def test_missing_front_matter(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "s", "# Just a heading\n")
    with pytest.raises(SpecErrors) as info:
        open_package(skill, tmp_path / "x")
    (err,) = info.value.errors
    assert err.message == "SKILL.md has no front matter" and err.line == 1
    assert err.file == str(skill / "SKILL.md")


def test_unclosed_front_matter(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors, match="front matter is not closed"):
        parse_front_matter("---\nname: a\n", tmp_path / "SKILL.md")


def test_front_matter_yaml_error_has_line(tmp_path: Path) -> None:
    with pytest.raises(SpecErrors) as info:
        parse_front_matter("---\nname: a\ndescription: [oops\n---\nbody\n", tmp_path / "SKILL.md")
    err = info.value.errors[0]
    assert err.message.startswith("invalid front matter YAML") and err.line is not None and err.line >= 3


@pytest.mark.parametrize("name", ["Calc", "calc_tool", "-calc", "calc-", "", "a" * 65])
def test_bad_skill_name(tmp_path: Path, name: str) -> None:
    skill = make_skill(tmp_path / "s", f"---\nname: '{name}'\ndescription: d\n---\n")
    with pytest.raises(SpecErrors) as info:
        open_package(skill, tmp_path / "x")
    (err,) = info.value.errors
    assert err.path == ("name",) and err.message.startswith("invalid skill name")
    assert str(err).startswith(f"{skill / 'SKILL.md'}:2: name: invalid skill name")


def test_skill_name_with_trailing_newline_rejected(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "s", '---\nname: "calc\\n"\ndescription: d\n---\n')
    with pytest.raises(SpecErrors, match="invalid skill name"):
        open_package(skill, tmp_path / "x")


def test_missing_description(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "s", "---\nname: calc\n---\n")
    with pytest.raises(SpecErrors) as info:
        open_package(skill, tmp_path / "x")
    assert info.value.errors[0].path == ("description",)


# ---- versions ------------------------------------------------------------------

def test_version_from_front_matter(tmp_path: Path) -> None:
    package = open_package(make_skill(tmp_path / "calc"), tmp_path / "x")
    assert (package.name, package.version, package.key) == ("calc", "1.2.0", "calc@1.2.0")
    assert package.description == "Adds numbers."
    assert package.body.startswith("# Calculator")


def test_version_from_content_hash_when_absent(tmp_path: Path) -> None:
    md = "---\nname: calc\ndescription: d\n---\nbody\n"
    first = open_package(make_skill(tmp_path / "a", md, **{"eval.yaml": EVAL_YAML}), tmp_path / "x")
    assert first.version == f"h-{first.content_hash[:10]}"
    assert len(first.content_hash) == 64
    same = open_package(make_skill(tmp_path / "b", md, **{"eval.yaml": EVAL_YAML}), tmp_path / "x")
    assert same.version == first.version  # content, not location
    changed = open_package(make_skill(tmp_path / "c", md, **{"eval.yaml": EVAL_YAML + "\n"}), tmp_path / "x")
    assert changed.version != first.version
    # Caches do not change the hash.
    (tmp_path / "b" / "__pycache__").mkdir()
    (tmp_path / "b" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert open_package(tmp_path / "b", tmp_path / "x").version == first.version


@pytest.mark.parametrize("version", ["1.0|2", "bad version", "1.0\n"])
def test_invalid_front_matter_version(tmp_path: Path, version: str) -> None:
    escaped = version.replace("\n", "\\n")
    skill = make_skill(tmp_path / "s", f'---\nname: calc\ndescription: d\nversion: "{escaped}"\n---\n')
    with pytest.raises(SpecErrors) as info:
        open_package(skill, tmp_path / "x")
    assert info.value.errors[0].path == ("version",)


# ---- partition keys ------------------------------------------------------------

def test_partition_key_accepts_valid_keys() -> None:
    assert partition_key_problem("calc@1.2.0") is None
    assert partition_key_problem("my-skill@h-0123456789") is None
    assert partition_key_problem("a@2.0.0-rc.1+build_5") is None


@pytest.mark.parametrize("key", [
    "calc|x@1.0", "calc@1.0|x", "calc@1.0\n", "calc\n@1.0", "calc@1.\n0", "Calc@1.0",
    "calc@", "@1.0", "", "calc", "calc@-1", "calc@1.0 beta",
])
def test_partition_key_problems(key: str) -> None:
    assert partition_key_problem(key) is not None


# ---- zips ----------------------------------------------------------------------

def test_zip_package_loads(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "src", **{"eval.yaml": EVAL_YAML, "eval__fixtures__a.txt": "fixture"})
    archive = zip_folder(folder, tmp_path / "calc.zip")
    package = open_package(archive, tmp_path / "extract")
    assert package.key == "calc@1.2.0"
    assert package.source == archive
    assert package.root.is_relative_to(tmp_path / "extract")
    assert (package.root / "eval" / "fixtures" / "a.txt").read_text() == "fixture"
    assert find_suite_file(package.root) == package.root / "eval.yaml"
    # Opening again reuses the extraction.
    assert open_package(archive, tmp_path / "extract").root == package.root


def test_zip_with_single_top_folder(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "src")
    archive = zip_folder(folder, tmp_path / "calc.zip", prefix="calc-1.2.0/")
    package = open_package(archive, tmp_path / "extract")
    assert package.root.name == "calc-1.2.0" and package.name == "calc"


def test_zip_slip_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("SKILL.md", SKILL_MD)
        zf.writestr("../evil.txt", "pwned")
    with pytest.raises(SpecErrors) as info:
        open_package(archive, tmp_path / "extract" / "deep")
    assert "unsafe path in archive: '../evil.txt'" in info.value.errors[0].message
    assert not (tmp_path / "extract" / "evil.txt").exists()
    assert not any(p.name == "evil.txt" for p in tmp_path.rglob("*"))


def test_zip_absolute_path_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("/etc/evil", "x")
    with pytest.raises(SpecErrors, match="unsafe path"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_zip_symlink_refused(tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    info = zipfile.ZipInfo("SKILL.md")
    info.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(SpecErrors, match="symbolic link"):
        safe_extract(archive, tmp_path / "out")


def test_zip_bomb_refused_by_ratio(tmp_path: Path) -> None:
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("SKILL.md", SKILL_MD)
        zf.writestr("zeros.bin", bytes(50 * 1024 * 1024))
    assert archive.stat().st_size < 1024 * 1024
    with pytest.raises(SpecErrors) as info:
        open_package(archive, tmp_path / "extract")
    err = info.value.errors[0]
    assert "'zeros.bin' expands" in err.message and "zip bomb" in (err.expected or "")
    # Refused before anything was written.
    assert not (tmp_path / "extract").exists()


def test_truncated_zip_refused(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "src", **{"eval.yaml": EVAL_YAML})
    archive = zip_folder(folder, tmp_path / "calc.zip")
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(SpecErrors) as info:
        open_package(archive, tmp_path / "extract")
    assert "not a readable zip archive" in info.value.errors[0].message


def _corrupt_member(archive: Path, member: str, offset: int, value: int) -> None:
    """Overwrite one byte of ``member``'s compressed data, keeping the directory intact."""
    raw = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo(member)
    # Local header: 30 bytes + name + extra field (read from the local header itself).
    name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
    extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    raw[start + offset] = value
    archive.write_bytes(bytes(raw))


def _archive_with_data(archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("SKILL.md", SKILL_MD)
        zf.writestr("data.bin", b"A" * 5000 + bytes(range(256)) * 20)
    return archive


def test_zip_with_invalid_deflate_stream_refused_and_cleaned_up(tmp_path: Path) -> None:
    # 0xFF as the first deflate byte declares the reserved block type 3: zlib.error.
    archive = _archive_with_data(tmp_path / "calc.zip")
    _corrupt_member(archive, "data.bin", 0, 0xFF)
    dest = tmp_path / "out"
    with pytest.raises(SpecErrors, match="archive is damaged"):
        safe_extract(archive, dest)
    assert not dest.exists() and not (tmp_path / "out.partial").exists()


def test_zip_with_bad_crc_refused(tmp_path: Path) -> None:
    archive = tmp_path / "calc.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("SKILL.md", SKILL_MD)
        zf.writestr("data.txt", "hello world")
    _corrupt_member(archive, "data.txt", 0, ord("J"))
    with pytest.raises(SpecErrors, match="archive is damaged"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


def test_not_a_package(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(SpecErrors, match="not a skill folder"):
        open_package(tmp_path / "file.txt", tmp_path / "x")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecErrors, match="SKILL.md not found"):
        open_package(tmp_path / "empty", tmp_path / "x")


# ---- discovery -----------------------------------------------------------------

def test_find_packages_finds_folders_and_zips_not_nested(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    a = make_skill(skills / "a", **{"eval.yaml": EVAL_YAML})
    make_skill(a / "nested-skill")  # a folder with SKILL.md inside a package
    (a / "bundled.zip").write_bytes(b"not scanned")  # a zip inside a package
    b = make_skill(skills / "group" / "b")
    (skills / "c.zip").write_bytes(b"PK")
    (skills / "group" / "d.ZIP").write_bytes(b"PK")
    (skills / "notes").mkdir()
    (skills / "notes" / "readme.md").write_text("x")
    make_skill(skills / ".hidden" / "h")
    assert find_packages(skills) == sorted([a, b, skills / "c.zip", skills / "group" / "d.ZIP"])
    assert find_packages(tmp_path / "missing") == []


# ---- whole skill ----------------------------------------------------------------

def test_load_skill_resolves_package_targets(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "calc", **{"eval.yaml": EVAL_YAML, "targets.yaml": TARGETS_YAML})
    loaded = load_skill(folder, datasets_dir=None, extract_dir=tmp_path / "x")
    assert loaded.suite.execution.targets == ["echo"]
    assert loaded.suite.version == "1.2.0"
    assert loaded.suite.system_prompt == loaded.package.body
    assert set(loaded.targets) == {"echo"}


def test_load_skill_unknown_target_is_an_error(tmp_path: Path) -> None:
    eval_yaml = "execution:\n  targets: [ghost]\n" + EVAL_YAML
    folder = make_skill(tmp_path / "calc", **{"eval.yaml": eval_yaml, "targets.yaml": TARGETS_YAML})
    with pytest.raises(SpecErrors) as info:
        load_skill(folder, datasets_dir=None, extract_dir=tmp_path / "x")
    err = info.value.errors[0]
    assert err.path == ("execution", "targets") and "ghost" in err.message


def test_load_skill_dataset_from_project_datasets_dir(tmp_path: Path) -> None:
    datasets = tmp_path / "datasets"
    datasets.mkdir()
    (datasets / "shared.jsonl").write_text('{"id": "s1", "input": "shared"}\n')
    folder = make_skill(tmp_path / "skills" / "calc",
                        **{"eval.yaml": "tests: datasets/shared.jsonl\n", "targets.yaml": TARGETS_YAML})
    loaded = load_skill(folder, datasets_dir=datasets, extract_dir=tmp_path / "x")
    assert [t.id for t in loaded.suite.tests] == ["s1"]
    # Files elsewhere stay out of reach.
    (tmp_path / "secret.jsonl").write_text('{"input": "secret"}\n')
    (folder / "eval.yaml").write_text("tests: ../../secret.jsonl\n")
    with pytest.raises(SpecErrors, match="outside the skill package"):
        load_skill(folder, datasets_dir=datasets, extract_dir=tmp_path / "x")


def test_unquoted_float_version_is_refused(tmp_path: Path) -> None:
    from eval_pipelines.suite.errors import SpecErrors
    from eval_pipelines.suite.package import open_package

    root = tmp_path / "calc"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: calc\ndescription: d\nversion: 1.10\n---\nbody\n")
    with pytest.raises(SpecErrors) as info:
        open_package(root, tmp_path / "work")
    assert "read as a number" in str(info.value) and "1.10" in str(info.value)
