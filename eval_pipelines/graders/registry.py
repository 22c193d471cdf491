"""Every assertion type, under every name the seeds use for it.

Adding a type: write one module with a ``Grader`` subclass and list it in
``_GRADERS``. Names are matched case-insensitively with ``-`` read as ``_``,
so ``llm-judge`` and ``llm_judge`` are the same type.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from eval_pipelines.graders.base import Grader, Params
from eval_pipelines.graders.contains import Contains
from eval_pipelines.graders.equals import Equals
from eval_pipelines.graders.is_json import IsJson
from eval_pipelines.graders.json_schema import JsonSchema
from eval_pipelines.graders.regex import Regex

_GRADERS: list[Grader[Any]] = [Equals(), Contains(), Regex(), IsJson(), JsonSchema()]

_BY_NAME: dict[str, Grader[Any]] = {}
for _grader in _GRADERS:
    for _name in (_grader.type, *_grader.aliases):
        _BY_NAME[_name] = _grader


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def known_types() -> list[str]:
    return sorted(_BY_NAME)


def get_grader(name: str) -> Grader[Any] | None:
    return _BY_NAME.get(_key(name))


def canonical_type(name: str) -> str | None:
    grader = get_grader(name)
    return grader.type if grader else None


def parse_params(type_name: str, config: dict[str, Any]) -> Params:
    """Validate an assertion's type-specific fields; raises ``ValidationError``."""
    grader = get_grader(type_name)
    if grader is None:
        raise KeyError(type_name)
    return grader.Params.model_validate(config)


__all__ = ["ValidationError", "canonical_type", "get_grader", "known_types", "parse_params"]
