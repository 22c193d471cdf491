"""The rule for third-party formats (promptfoo, AgentV, skill-creator's ``evals.json``), in one place.

Our own formats honour or refuse every field. A file written for another tool is read on that
tool's terms, so each field of it falls in one of these cases, and every family says which
through the functions below rather than writing its own messages:

* **read**: the tool honours it; we honour it or refuse it by name (the family's own code).
* **not used** (:func:`not_used`): the tool reads it, but here it changes nothing (a display
  option, a concurrency setting our engine decides): accepted, with a stored warning that names it.
* **without effect** (:func:`without_effect`): the tool's own schema drops it, or it has nothing to
  act on here: accepted, with a stored warning.
* **unknown** (:func:`unknown_fields`): a key the family does not list. The tool's own schema
  decides (promptfoo's zod objects in src/types/index.ts are not strict: a key they do not declare
  is stripped or never read, and its config loader only warns):

  - a key the tool reads that the family does not honour (``reads``): refused by name;
  - a likely misspelling of a key the tool reads (:func:`likely_misspelling`): refused in one line
    with "did you mean", since the tool would drop it silently and the user meant the other key;
  - any other key: the tool ignores it, so it is accepted with a stored warning
    ("promptfoo ignores this field too"), never refused.

  Our own formats (``ctx.tool`` None) keep refusing every unknown key.
* **kept by the tool's own users** (:func:`ignored_fields`): for ``evals.json``, whose keys no
  skill-creator tool reads beyond its schema, the value of an ignored key is also kept (in the
  case's metadata), with the same warning and the same misspelling rule.

Warnings go to ``LoadContext.warnings``: the loader returns them, the ``suites`` table stores
them and the reports show them.
"""

from __future__ import annotations

from typing import Any, Iterable

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.errors import format_path
from eval_pipelines.suite.source import Document

def unknown_fields(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any],
                   known: Iterable[str], reads: Iterable[str] = ()) -> None:
    """Every key of ``raw`` not in ``known`` (the keys the family honours or refuses itself), by the
    rule above. ``reads``: keys the tool reads at this level that the family does not handle."""
    known = set(known)
    if ctx.tool is None:  # our own format: every unknown key is refused
        ctx.unknown_keys(doc, path, raw, known)
        return
    reads = set(reads) - known
    for key in raw:
        if key in known:
            continue
        where = path + (key,)
        if key in reads:
            ctx.error(doc, where, f"{ctx.tool}'s field {key!r} is not supported")
            continue
        guess = likely_misspelling(str(key), known | reads)
        if guess is not None:
            ctx.error(doc, where, f"unknown field {key!r}; did you mean {guess!r}?",
                      f"{ctx.tool} reads {guess!r} here and ignores {key!r}")
            continue
        ignored_field(ctx, doc, where, ctx.tool, None)


def ignored_fields(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any],
                   known: Iterable[str], tool: str, kept_in: str | None) -> dict[str, Any]:
    """Keys of ``raw`` the tool's own code never reads (not in ``known``): accepted with a stored
    warning and returned, to be kept where the caller says (``kept_in``); a key close to a known
    one is a likely misspelling of a field the tool reads, refused with its "did you mean"."""
    known = set(known)
    kept: dict[str, Any] = {}
    for key in raw:
        if key in known:
            continue
        guess = likely_misspelling(str(key), known)
        if guess is not None:
            ctx.error(doc, path + (key,), f"unknown field {key!r}; did you mean {guess!r}?",
                      f"{tool} reads {guess!r} here and ignores {key!r}")
        else:
            kept[key] = raw[key]
            ignored_field(ctx, doc, path + (key,), tool, kept_in)
    return kept


def likely_misspelling(key: str, known: Iterable[str]) -> str | None:
    """The known key ``key`` is a typo of, or None. A typo is a Damerau-Levenshtein distance (edits:
    insert, delete, substitute, swap two neighbours) of at most 1 for keys of up to 5 characters and
    at most 2 for longer ones, compared case-insensitively. A key that is a known key with a prefix or
    suffix of two or more characters added (``eval_name`` beside ``name``) is a different field, never
    a typo (one added character, ``prompts``, is a typo); nor is a short
    key two edits away (``kind`` is not ``id``, ``expected_behavior`` is not ``expected_output``).
    Real third-party files carry such keys; refusing them as misspellings would refuse the file."""
    lowered = key.lower()
    best: tuple[int, str] | None = None
    for name in known:
        other = name.lower()
        if len(lowered) - len(other) >= 2 and (lowered.startswith(other) or lowered.endswith(other)):
            return None
        limit = 1 if max(len(lowered), len(other)) <= 5 else 2
        distance = _edit_distance(lowered, other)
        if distance <= limit and (best is None or (distance, name) < best):
            best = (distance, name)
    return best[1] if best else None


def _edit_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment: adjacent swaps count one edit)."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        rows[i][0] = i
    for j in range(len(b) + 1):
        rows[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


def ignored_field(ctx: LoadContext, doc: Document, path: tuple[Any, ...], tool: str, kept_in: str | None) -> None:
    """The stored warning for one field the tool ignores too (and where its value is kept, if anywhere)."""
    line = doc.line_of(path)
    effect = f"kept in {kept_in}" if kept_in else "accepted without effect"
    ctx.warnings.append(f"{doc.file}{f':{line}' if line else ''}: {format_path(path)}: {tool} ignores "
                        f"this field too ({effect})")


def not_used(ctx: LoadContext, doc: Document, field: str, why: str) -> None:
    """``file: field: accepted but not used (why)``: the tool reads it; here it changes nothing."""
    ctx.warnings.append(not_used_message(doc, field, why))


def without_effect(ctx: LoadContext, doc: Document, field: str, why: str) -> None:
    """``file: field: accepted without effect (why)``: nothing reads it, here or in the tool."""
    ctx.warnings.append(without_effect_message(doc, field, why))


def not_used_message(doc: Document, field: str, why: str) -> str:
    return f"{doc.file}: {field}: accepted but not used ({why})"


def without_effect_message(doc: Document, field: str, why: str) -> str:
    return f"{doc.file}: {field}: accepted without effect ({why})"


def field_name(path: tuple[Any, ...]) -> str:
    """A field path as the warnings write it (``tests.0.assert.1``)."""
    return ".".join(map(str, path))
