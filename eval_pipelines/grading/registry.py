"""Every assertion type, under every name the seeds use for it.

Adding a type: write one module in this package with a ``Grader`` subclass
that sets ``type``, ``aliases`` and ``Params``, then run
``python -m eval_pipelines.grading.registry`` to rewrite ``grader_index.py``
(``tests/grading/test_grader_index.py`` says so when it is stale). A name claimed
by two graders is an error when the index is written, not a silent override.
Names are matched case-insensitively with ``-`` read as ``_``, so ``llm-judge``
and ``llm_judge`` are the same type.

Why an index: importing every grader module (pydantic models, jinja2, jsonschema,
sqlglot, html5lib...) cost about a second at every start of the CLI and of the
Dagster code location. The index names each assertion name's module, so a run
imports only the graders its suite uses; the full scan runs for the docs, the
schema export, and to suggest a name for an unknown one (an error path). A
grader missing from a stale index is still found by that scan.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from typing import Any

from pydantic import ValidationError

from eval_pipelines.grading.base import Grader, Params
from eval_pipelines.grading.grader_index import GRADERS

_PACKAGE = "eval_pipelines.grading.graders"
_HELPERS = {"base", "registry", "text"}


def _graders_of(module_name: str) -> list[Grader[Any]]:
    """One instance of each grader class that module defines."""
    module = importlib.import_module(f"{_PACKAGE}.{module_name}")
    found = []
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if not issubclass(cls, Grader) or cls is Grader or cls.__module__ != module.__name__:
            continue
        if not isinstance(cls.__dict__.get("type"), str):
            continue  # an abstract helper base
        found.append(cls())
    return found


def _discover() -> dict[str, tuple[str, Grader[Any]]]:
    """Every name of every grader module: name key -> (module, grader). Imports them all."""
    import eval_pipelines.grading.graders as package

    by_name: dict[str, tuple[str, Grader[Any]]] = {}
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if module_info.name in _HELPERS or module_info.name.startswith("_"):
            continue
        for grader in _graders_of(module_info.name):
            for name in (grader.type, *grader.aliases):
                key = _key(name)
                if key in by_name:
                    raise RuntimeError(f"assertion name {name!r} is claimed by "
                                       f"{type(by_name[key][1]).__name__} and {type(grader).__name__}")
                by_name[key] = (module_info.name, grader)
    return by_name


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


# The graders imported so far, by name key (one instance per class, shared by its names).
_LOADED: dict[str, Grader[Any]] = {}
_SCANNED = False


def _load(module_name: str) -> None:
    for grader in _graders_of(module_name):
        known = next((g for g in _LOADED.values() if type(g) is type(grader)), grader)
        for name in (grader.type, *grader.aliases):
            _LOADED.setdefault(_key(name), known)


def graders_by_name() -> dict[str, Grader[Any]]:
    """Every name of every grader (imports every grader module once)."""
    global _SCANNED
    if not _SCANNED:
        for key, (module_name, grader) in _discover().items():
            _LOADED.setdefault(key, grader)
        _SCANNED = True
    return dict(_LOADED)


def __getattr__(name: str) -> Any:
    if name == "_BY_NAME":  # the full table under its former name
        return graders_by_name()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def known_types() -> list[str]:
    return sorted(set(GRADERS) | set(graders_by_name()))


def all_graders() -> list[Grader[Any]]:
    """One entry per grader (aliases folded), in type order: what reports, the schema
    export and the docs index read each grader's metadata from."""
    unique = {id(g): g for g in graders_by_name().values()}
    return sorted(unique.values(), key=lambda g: g.type)


def get_grader(name: str) -> Grader[Any] | None:
    key = _key(name)
    grader = _LOADED.get(key)
    if grader is None and key in GRADERS:
        _load(GRADERS[key][0])
        grader = _LOADED.get(key)
    if grader is None and not _SCANNED:  # unknown, or a grader newer than the index
        grader = graders_by_name().get(key)
    return grader


def index_markdown() -> str:
    """The index table of docs/assertions.md, from each grader's metadata (the docs test
    compares the two, so a new grader appears there or CI says what to paste)."""
    lines = ["| type | aliases | group | graded by | score |", "|---|---|---|---|---|"]
    for grader in sorted(all_graders(), key=lambda g: _GROUP_ORDER.index(g.group) if g.group in _GROUP_ORDER
                         else len(_GROUP_ORDER)):
        aliases = ", ".join(f"`{a}`" for a in grader.aliases) or "—"
        lines.append(f"| `{grader.type}` | {aliases} | {grader.group} | {grader.grader_family()} | "
                     f"{grader.score_range} |")
    return "\n".join(lines) + "\n"


# Sections of docs/assertions.md, in page order.
_GROUP_ORDER = ["deterministic text", "structured", "measurements", "agent", "regression", "executed",
                "model-graded", "composite", "human"]


def canonical_type(name: str) -> str | None:
    indexed = GRADERS.get(_key(name))
    if indexed is not None:  # without importing the grader
        return indexed[1]
    grader = get_grader(name)
    return grader.type if grader else None


def parse_params(type_name: str, config: dict[str, Any]) -> Params:
    """Validate an assertion's type-specific fields; raises ``ValidationError``."""
    grader = get_grader(type_name)
    if grader is None:
        raise KeyError(type_name)
    return grader.Params.model_validate(config)


def index_source() -> str:
    """The text of ``grader_index.py`` for the grader modules there are now."""
    lines = ['"""Generated by ``python -m eval_pipelines.grading.registry``: do not edit.',
             "",
             "Assertion name (lower case, ``_`` for ``-``) -> (module in ``grading/graders``, canonical type).",
             '"""', "", "GRADERS: dict[str, tuple[str, str]] = {"]
    lines += [f"    {key!r}: ({module!r}, {grader.type!r})," for key, (module, grader) in sorted(_discover().items())]
    return "\n".join(lines + ["}", ""])


__all__ = ["ValidationError", "all_graders", "canonical_type", "get_grader", "graders_by_name", "known_types",
           "parse_params"]


if __name__ == "__main__":
    from pathlib import Path

    target = Path(__file__).with_name("grader_index.py")
    target.write_text(index_source())
    print(f"wrote {target.name}: {len(GRADERS)} -> {index_source().count(chr(10)) - 7} names", file=sys.stderr)

