"""Text helpers shared by the deterministic graders."""

from __future__ import annotations

import json
import re
from typing import Any

# JSON text of a str exactly as json.dumps(..., ensure_ascii=False) writes it
# (the C encoder): batch graders build their details JSON from these pieces.
json_str = json.encoder.encode_basestring


def json_str_list(values: list[str]) -> str:
    return "[" + ", ".join(map(json_str, values)) + "]"


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)\n?```", re.DOTALL)


def fenced_json(text: str) -> str | None:
    """``_FENCE.search(text).group(1)`` (or None) in linear time.

    The regex backtracks ``\\s*\\n`` over a long run of blank lines and
    re-scans the rest for every newline in it: a ```` ```json ```` followed by
    100 000 characters of blank lines took 80 s.
    """
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        i = start + 3
        if text.startswith(("json", "JSON"), i):
            i += 4
        j = i
        while j < len(text) and text[j].isspace():
            j += 1
        newline = text.rfind("\n", i, j)
        if newline < 0:
            pos = start + 1
            continue
        body = newline + 1
        close = text.find("```", body)
        if close < 0:
            return None  # no later fence can close either
        end = close - 1 if close - 1 >= body and text[close - 1] == "\n" else close
        return text[body:end]
    return None


def normalise(
    text: str, *, case_sensitive: bool, trim_whitespace: bool, normalize_newlines: bool
) -> str:
    """The exact-match normalisation of seed 003, in its order."""
    if trim_whitespace:
        text = text.strip()
    if normalize_newlines:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not case_sensitive:
        text = text.lower()
    return text


def as_text(value: Any) -> str:
    """Expected values may be numbers or structures in the spec; compare as text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def parse_json_output(text: str, *, allow_fence: bool) -> Any:
    """Parse a model output as JSON; with ``allow_fence`` a ```json block is accepted.

    Raises ``ValueError`` with a message a person can act on.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if allow_fence:
            block = fenced_json(text)
            if block is not None:
                try:
                    return json.loads(block)
                except json.JSONDecodeError as inner:
                    raise ValueError(
                        f"fenced JSON block is invalid: {inner.msg} at line {inner.lineno}"
                    ) from None
        raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
