"""The base of every suite model: unknown fields refused (our formats honour or refuse each field).

It also keeps a big suite small in memory (issue 33). pydantic gives every instance its own
``__pydantic_fields_set__``, the names the loader passed: 18 for an eval.yaml case, six for its
assertion, two for its message, the same in every case; at 100,000 cases those sets were ~170 MB of
the suite's ~410 MB. Here equal sets are one set, shared as each model is made (so a loading suite
never holds them all either), and a field assigned later first gives the instance a copy of its
own: ``model_fields_set`` answers as before. The strings every case repeats (a dataset's path, a
role, an assertion type) are interned the same way.
"""

import sys
from typing import Any

from pydantic import BaseModel, ConfigDict

# (model class, field names) -> the one set of those names its instances share; bounded.
_SHARED_FIELD_SETS: dict[tuple[type, frozenset[str]], set[str]] = {}
_MAX_SHARED = 4096
_REPEATED_STRINGS = ("source_file", "role", "type", "category")


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)

    def model_post_init(self, context: Any, /) -> None:
        fields = self.__pydantic_fields_set__
        key = (type(self), frozenset(fields))
        shared = _SHARED_FIELD_SETS.get(key)
        if shared is None:
            if len(_SHARED_FIELD_SETS) < _MAX_SHARED:
                _SHARED_FIELD_SETS[key] = fields
        elif shared is not fields:
            object.__setattr__(self, "__pydantic_fields_set__", shared)
        values = self.__dict__
        for name in _REPEATED_STRINGS:
            value = values.get(name)
            if type(value) is str:
                values[name] = sys.intern(value)

    def __setattr__(self, name: str, value: Any) -> None:
        fields = self.__pydantic_fields_set__
        if name not in fields and name in type(self).model_fields:
            # pydantic adds the name to the set: to a copy, never to the set other instances share.
            object.__setattr__(self, "__pydantic_fields_set__", set(fields))
        super().__setattr__(name, value)
