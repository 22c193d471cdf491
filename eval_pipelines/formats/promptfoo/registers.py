"""The loader's side of promptfoo's ``options.storeOutputAs`` (suite/registers.py says what it is).

A test reads a register when some test stores that name at or before it in promptfoo's run
order (``runSerially`` tests first, then as written): its variable then holds the register's
mark, merged over its own value as promptfoo's ``Object.assign(vars, registers)`` does, before
the variables are resolved into each other (``{{favoriteFruit}}`` inside another variable) and
the prompt and assertions are rendered. Every case of a suite that stores outputs gets its
place in the run order; a suite without ``storeOutputAs`` is loaded as before.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.cases import RawTest
from eval_pipelines.formats.promptfoo.pairing import asks_json_schema, prompt_settings
from eval_pipelines.suite.registers import Registers, as_text, register_mark
from eval_pipelines.suite.source import Document


def _options(default: dict[str, Any], data: Any) -> dict[str, Any]:
    own = data.get("options") if isinstance(data, dict) else None
    return {**(default.get("options") or {}), **(own if isinstance(own, dict) else {})}


class RegisterPlan:
    """Which test stores which name, and each test's place in promptfoo's run order."""

    def __init__(self, ctx: LoadContext, tests: list[RawTest], default: dict[str, Any], dialect: str) -> None:
        self.ctx = ctx
        self.stores: list[tuple[tuple[int, int], str]] = []  # (rank, name)
        self.rank: dict[int, tuple[int, int]] = {}
        for number, test in enumerate(tests, start=1):
            options = _options(default if isinstance(default, dict) else {}, test.data)
            self.rank[number] = (0 if options.get("runSerially") else 1, number)
            name = options.get("storeOutputAs")
            if dialect != "promptfoo" or name is None:
                continue
            if not isinstance(name, str) or not name.strip():
                ctx.error(test.doc, test.path + ("options", "storeOutputAs"), "invalid storeOutputAs",
                          "the name of the variable later tests read the output as")
                continue
            self.stores.append((self.rank[number], name))
        if self.stores:
            ctx.warnings.append(f"{tests[0].doc.file}: options.storeOutputAs: the cases run one at a time in "
                                "promptfoo's order (concurrency 1), as promptfoo runs them")

    def fill(self, number: int, combination: int, prompt_index: int, variables: dict[str, Any],
             store_as: Any, transforms: list[Any] | None, doc: Document, prompt: Any,
             runs_on: list[Any]) -> tuple[dict[str, Any], Registers | None]:
        """The case's variables with the marks of the registers it may read, and its ``Registers``
        (None when the suite stores no output)."""
        if not self.stores:
            return variables, None
        rank = self.rank.get(number, (1, number))
        names = sorted({name for at, name in self.stores if at <= rank})
        reads = {name: as_text(variables.get(name)) for name in names}
        settings = prompt_settings(self.ctx, doc, prompt, runs_on) if isinstance(store_as, str) else None
        registers = Registers(
            order=(rank[0], number, combination, prompt_index),
            store_as=store_as if isinstance(store_as, str) and store_as.strip() else None,
            transforms=[str(t) for t in transforms or []],
            output_json=bool(runs_on) and all(asks_json_schema(settings, p) for p in runs_on),
            reads=reads)
        return {**variables, **{name: register_mark(name) for name in names}}, registers
