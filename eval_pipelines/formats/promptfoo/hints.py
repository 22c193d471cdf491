"""What to write instead, for fields promptfoo's own examples use but promptfoo does not have.

promptfoo's schemas (src/types/index.ts, src/validators/providers.ts) do not have them, and its
evaluator does not read them: promptfoo runs such a config as if the field were not there (a
`matrix` fills no variable, a `dataset` gives a test no variables) or fails later (a
provider given by a `python:` / `file:` field keeps an id no provider answers to: "Could not
identify provider"). The first kind is accepted with the stored warning of formats/compat.py
("promptfoo ignores this field too"), the second refused; the hints say, in the warning's or the
refusal's one line, how promptfoo spells what the example meant.
"""

from __future__ import annotations

import re
from dataclasses import replace

from eval_pipelines.suite.errors import SpecError

_SCRIPT_PROVIDER = ("promptfoo has no provider field `{key}` (it keeps the `id`, which names no provider: "
                    "\"Could not identify provider\")", "`id: file://path/provider.py` (or .js) for a script provider")
# (where the key is: the first element of its path, or "" at the top level, and the key)
#   -> (what promptfoo does with it, what to write instead)
HINTS: dict[tuple[str, str], tuple[str, str]] = {
    ("tests", "matrix"): ("promptfoo has no test field `matrix` (promptfoo ignores it: nothing fills "
                          "the variables it names)", "a list in `vars` (`vars: {item: [a, b, c]}`): one test per value"),
    ("tests", "dataset"): ("promptfoo has no test field `dataset` (promptfoo ignores it: the test gets no "
                           "variables from the file)", "`tests: file://data.csv` (one test per row) with shared assertions in "
                           "`defaultTest.assert`"),
    ("providers", "python"): (_SCRIPT_PROVIDER[0].format(key="python"), _SCRIPT_PROVIDER[1]),
    ("providers", "file"): (_SCRIPT_PROVIDER[0].format(key="file"), _SCRIPT_PROVIDER[1]),
    ("targets", "python"): (_SCRIPT_PROVIDER[0].format(key="python"), _SCRIPT_PROVIDER[1]),
    ("targets", "file"): (_SCRIPT_PROVIDER[0].format(key="file"), _SCRIPT_PROVIDER[1]),
    ("", "plugins"): ("promptfoo has no top-level `plugins` (promptfoo ignores it: no tests come from it)",
                      "red-team plugins under `redteam.plugins`, for `promptfoo redteam generate`"),
}


def with_hints(errors: list[SpecError]) -> list[SpecError]:
    """``errors`` with each unknown-field error that has a hint above saying what to write instead."""
    out = []
    for error in errors:
        key = error.path[-1] if error.path else None
        where = error.path[0] if len(error.path) > 1 and isinstance(error.path[0], str) else ""
        hint = HINTS.get((where, key)) if isinstance(key, str) else None
        if hint and (error.message.startswith("unknown field") or error.message.startswith("field ")):
            error = replace(error, message=f"unknown field {key!r}: {hint[0]}", expected=hint[1])
        out.append(error)
    return out


_IGNORED = re.compile(r": (?P<path>[^ ]+): promptfoo ignores this field too")


def with_warning_hints(warnings: list[str]) -> list[str]:
    """``warnings`` with each "promptfoo ignores this field too" that has a hint above saying what
    the config meant, in promptfoo's spelling."""
    out = []
    for warning in warnings:
        found = _IGNORED.search(warning)
        if found:
            parts = found["path"].replace("[", ".[").split(".")
            key, where = parts[-1], parts[0] if len(parts) > 1 else ""
            hint = HINTS.get((where, key))
            if hint:
                warning += f"; {hint[0].split(' (')[0]}: write {hint[1]}"
        out.append(warning)
    return out
