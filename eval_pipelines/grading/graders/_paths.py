"""Dot paths into JSON values: ``a.b[0].c``, and ``*`` wildcards for ignore lists."""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_MISSING = object()


def split_path(path: str) -> list[str | int]:
    return [int(i) if i else k for k, i in _TOKEN.findall(path)]


def get_path(value: Any, path: str) -> Any:
    """The value at ``path``, or ``MISSING`` when any step is absent."""
    current = value
    for part in split_path(path):
        if isinstance(part, int) and isinstance(current, list) and -len(current) <= part < len(current):
            current = current[part]
        elif isinstance(current, dict) and str(part) in current:
            current = current[str(part)]
        elif isinstance(current, list) and isinstance(part, str) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def is_missing(value: Any) -> bool:
    return value is _MISSING


def join(prefix: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else key


def matches_pattern(path: str, pattern: str) -> bool:
    """``users.*.id`` matches ``users[3].id`` and ``users.3.id``; ``data.*`` matches below data."""
    parts = [str(p) for p in split_path(path)]
    wanted = [str(p) for p in split_path(pattern)]
    if len(wanted) > len(parts):
        return False
    for got, want in zip(parts, wanted):
        if want != "*" and want != got:
            return False
    # A pattern names a field and everything under it.
    return True
