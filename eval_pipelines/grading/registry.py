"""Every assertion type, under every name the seeds use for it.

Adding a type: write one module in this package with a ``Grader`` subclass
that sets ``type``, ``aliases`` and ``Params``. The registry imports every
module of the package once and registers each such class; a name claimed by
two graders is an error at import time, not a silent override. Names are
matched case-insensitively with ``-`` read as ``_``, so ``llm-judge`` and
``llm_judge`` are the same type.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

from pydantic import ValidationError

import eval_pipelines.grading.graders as _package
from eval_pipelines.grading.base import Grader, Params

_HELPERS = {"base", "registry", "text"}


def _discover() -> dict[str, Grader[Any]]:
    by_name: dict[str, Grader[Any]] = {}
    for module_info in sorted(pkgutil.iter_modules(_package.__path__), key=lambda m: m.name):
        if module_info.name in _HELPERS or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{_package.__name__}.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, Grader) or cls is Grader or cls.__module__ != module.__name__:
                continue
            if not isinstance(cls.__dict__.get("type"), str):
                continue  # an abstract helper base
            grader = cls()
            for name in (grader.type, *grader.aliases):
                key = _key(name)
                if key in by_name:
                    raise RuntimeError(f"assertion name {name!r} is claimed by "
                                       f"{type(by_name[key]).__name__} and {cls.__name__}")
                by_name[key] = grader
    return by_name


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


_BY_NAME: dict[str, Grader[Any]] = _discover()


def known_types() -> list[str]:
    return sorted(_BY_NAME)


def all_graders() -> list[Grader[Any]]:
    """One entry per grader (aliases folded), in type order: what reports, the schema
    export and the docs index read each grader's metadata from."""
    unique = {id(g): g for g in _BY_NAME.values()}
    return sorted(unique.values(), key=lambda g: g.type)


def get_grader(name: str) -> Grader[Any] | None:
    return _BY_NAME.get(_key(name))


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
    grader = get_grader(name)
    return grader.type if grader else None


def parse_params(type_name: str, config: dict[str, Any]) -> Params:
    """Validate an assertion's type-specific fields; raises ``ValidationError``."""
    grader = get_grader(type_name)
    if grader is None:
        raise KeyError(type_name)
    return grader.Params.model_validate(config)


__all__ = ["ValidationError", "all_graders", "canonical_type", "get_grader", "known_types", "parse_params"]
