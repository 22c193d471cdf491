"""A loaded suite made smaller in memory, without changing a value: one copy of what every case repeats.

A 100,000-case suite lives from the ``eval_suite`` stage to ``eval_report``. Measured on the
benchmark's one-``equals``-per-case suite, each case cost ~4.1 KB, a third of it pydantic's
``__pydantic_fields_set__``: a set per model of the names the loader passed (18 for an
eval.yaml case, six for its assertion, two for its message), equal in every case. Each case
also held its own copy of the same file path and of short strings (``user``, ``equals``).

:func:`compact` makes equal sets one shared set per model class, and equal strings of the
fields named below one string. Both are invisible to values, dumps and comparisons. The one
observable difference: assigning a field on one case (pydantic adds its name to the fields
set) also adds it to the other cases sharing that set. No suite model reads its fields set
(``exclude_unset`` and ``model_fields_set`` are used on grader parameters only), and a case
assigned after loading (``cli/run_source.py`` clears ``targets``) has that name set already.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from eval_pipelines.suite.models import Suite

# Fields whose values repeat across cases (a dataset's path, a role, an assertion type).
_SHARED_STRINGS = ("source_file", "role", "type", "category")


class _Interner:
    def __init__(self) -> None:
        self.sets: dict[tuple[type, frozenset[str]], set[str]] = {}
        self.strings: dict[str, str] = {}

    def model(self, model: BaseModel) -> None:
        fields = model.__pydantic_fields_set__
        shared = self.sets.setdefault((type(model), frozenset(fields)), fields)
        if shared is not fields:
            object.__setattr__(model, "__pydantic_fields_set__", shared)
        values = model.__dict__
        for name in _SHARED_STRINGS:
            value = values.get(name)
            if type(value) is str:
                values[name] = self.strings.setdefault(value, value)

    def models(self, items: Any) -> None:
        for item in items or ():
            if isinstance(item, BaseModel):
                self.model(item)


def compact(suite: Suite) -> Suite:
    """``suite`` itself, its cases, messages and assertions sharing what they repeat."""
    interner = _Interner()
    for case in suite.tests:
        interner.model(case)
        interner.models(case.input)
        interner.models(case.assertions)
    return suite
