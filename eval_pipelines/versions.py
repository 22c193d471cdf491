"""Ordering skill versions: semantic version when it parses, else by name."""

from __future__ import annotations

import re
from collections import defaultdict

_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+.]?(.*))?$")


def version_sort_key(version: str) -> tuple:
    match = _SEMVER.match(version)
    if not match:
        return (1, (0, 0, 0), 0, version)
    major, minor, patch, rest = match.groups()
    # A pre-release (1.0.0-rc1) sorts before its release (1.0.0).
    return (2, (int(major), int(minor or 0), int(patch or 0)), 0 if rest else 1, rest or "")


def latest_versions(keys: list[str]) -> dict[str, str]:
    """{skill: latest skill_version key} over partition keys ``name@version``."""
    by_skill: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        name, _, version = key.partition("@")
        by_skill[name].append(version)
    return {name: f"{name}@{max(vs, key=version_sort_key)}" for name, vs in by_skill.items()}
