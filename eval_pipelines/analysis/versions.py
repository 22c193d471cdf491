"""Ordering skill versions: semantic version when it parses, else by name."""

from __future__ import annotations

import re
from collections import defaultdict

_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def _identifier(part: str) -> tuple[int, int | str]:
    # Semver: numeric identifiers compare as numbers and sort before text ones.
    return (0, int(part)) if part.isdigit() else (1, part)


def version_sort_key(version: str) -> tuple:
    match = _SEMVER.match(version)
    if not match:
        return (1, (0, 0, 0), 0, (), version)
    major, minor, patch, pre = match.groups()
    core = (int(major), int(minor or 0), int(patch or 0))
    # A pre-release (1.0.0-rc.1) sorts before its release; build metadata (+...) is ignored.
    parts = [p for p in re.split(r"[.-]|(?<=[A-Za-z])(?=\d)", pre or "") if p]
    pre_key = tuple(_identifier(p) for p in parts)
    return (2, core, 0 if pre else 1, pre_key, "")


def latest_versions(keys: list[str]) -> dict[str, str]:
    """{skill: latest skill_version key} over partition keys ``name@version``."""
    by_skill: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        name, _, version = key.partition("@")
        by_skill[name].append(version)
    return {name: f"{name}@{max(vs, key=version_sort_key)}" for name, vs in by_skill.items()}
