"""Load errors that name the file, the line, the field path and what was expected.

Every loader collects problems as :class:`SpecError` values and raises one
:class:`SpecErrors` at the end, so a user sees all problems of a file at once
instead of fixing them one traceback at a time.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

from pydantic import ValidationError


class Located(Protocol):
    """A parsed file that knows the line of each field path (``suite.source.Document``)."""

    file: Path

    def line_of(self, path: Sequence[Any]) -> int | None: ...


def format_path(path: Sequence[str | int]) -> str:
    """``("tests", 2, "assert", 0, "value")`` -> ``tests[2].assert[0].value``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(root)"


def closest_key(key: str, known: Iterable[str]) -> str | None:
    """The known key a misspelt one most likely meant, if any is close enough."""
    matches = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_field(key: str, suggestions: Iterable[str]) -> str:
    """``unknown field 'asert'; did you mean 'assert'?`` (the hint only when one is close)."""
    guess = closest_key(key, suggestions)
    if guess == key:
        # The name exists, one level up or down (e.g. `args_match` inside an `expected` item
        # when it was meant for the assertion): suggesting the same name would only confuse.
        return f"field {key!r} is not allowed at this level"
    return f"unknown field {key!r}" + (f"; did you mean {guess!r}?" if guess else "")


def unknown_field_errors(doc: Any, path: Sequence[str | int], raw: dict[str, Any], known: Iterable[str],
                         suggestions: Iterable[str] | None = None) -> list["SpecError"]:
    """One error per key of ``raw`` not in ``known``, at that key's line of ``doc`` (a Document)."""
    known = set(known)
    pool = list(suggestions) if suggestions is not None else list(known)
    return [SpecError(str(doc.file), tuple(path) + (key,), unknown_field(key, pool),
                      doc.line_of(tuple(path) + (key,)))
            for key in raw if key not in known]


@dataclass(frozen=True)
class SpecError:
    file: str
    path: tuple[str | int, ...]
    message: str
    line: int | None = None
    expected: str | None = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        text = f"{where}: {format_path(self.path)}: {one_line(self.message)}"
        if self.expected:
            text += f" (expected {one_line(self.expected)})"
        return text


MESSAGE_LIMIT = 400  # characters of a message quoting a multi-line value; the value is cut there
LONG_LIMIT = 2000  # any message (a list of the supported names stays whole)


def one_line(text: str) -> str:
    """``text`` on one line: line breaks written ``\\n``; a message quoting a multi-line value (or
    any very long one) cut with the number of characters left out, so one refusal stays one line."""
    flat = text.replace("\r\n", "\n").replace("\n", "\\n")
    limit = MESSAGE_LIMIT if "\n" in text or "\\n" in text else LONG_LIMIT  # a value, raw or quoted
    if len(flat) <= limit:
        return flat
    return f"{flat[:limit]}... ({len(flat) - limit} more characters)"


@dataclass
class SpecErrors(Exception):
    """One or more problems found while loading suites, datasets or packages."""

    errors: list[SpecError] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    @classmethod
    def single(
        cls,
        file: str | Path,
        message: str,
        path: Sequence[str | int] = (),
        line: int | None = None,
        expected: str | None = None,
    ) -> "SpecErrors":
        return cls([SpecError(str(file), tuple(path), message, line, expected)])


def pydantic_errors(
    doc: Located, base: tuple[Any, ...], exc: ValidationError, known: list[str] | None = None
) -> list[SpecError]:
    """Map a pydantic error to SpecErrors at the right file line and path."""
    out: list[SpecError] = []
    for err in exc.errors():
        loc = _written_path(getattr(doc, "data", None), base, tuple(
            p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))))
        path = base + loc
        kind = err["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1]) if loc else "?"
            out.append(SpecError(str(doc.file), path, unknown_field(key, known or []), doc.line_of(path)))
        elif kind == "missing":
            out.append(SpecError(str(doc.file), path, "required field is missing", doc.line_of(path)))
        else:
            message = err["msg"].removeprefix("Value error, ")
            out.append(SpecError(str(doc.file), path, message, doc.line_of(path)))
    return out


def _written_path(data: Any, base: tuple[Any, ...], loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """``loc`` without the tags pydantic inserts for a discriminated union (``targets[0].openai.model``
    is ``targets[0].model`` in the file), so the error names the written field and its line."""
    node = data
    for step in base:
        node = node.get(step) if isinstance(node, dict) else node[step] if isinstance(node, list) and \
            isinstance(step, int) and step < len(node) else None
    out = []
    for i, step in enumerate(loc):
        if isinstance(node, dict) and isinstance(step, str) and step not in node and i < len(loc) - 1 \
                and isinstance(loc[i + 1], str) and loc[i + 1] in node:
            continue  # not in the file, and the next step is: a union's tag
        out.append(step)
        node = node.get(step) if isinstance(node, dict) else node[step] if isinstance(node, list) and \
            isinstance(step, int) and step < len(node) else None
    return tuple(out)


UNUSED_PREFIX = "accepted, not used: "


def accepted_not_used(doc: Located, path: Sequence[str | int], reason: str) -> str:
    """The stored warning for a field that loads but has no effect here.

    ``accepted, not used: FIELD: reason (file:line)``: it lands in ``suites.warnings``
    and in every report, so nobody reads a number believing the field shaped it.
    """
    line = doc.line_of(tuple(path))
    where = str(doc.file) + (f":{line}" if line else "")
    return f"{UNUSED_PREFIX}{format_path(tuple(path))}: {reason} ({where})"
