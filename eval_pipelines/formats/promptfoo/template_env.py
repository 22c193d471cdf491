"""promptfoo's ``env`` template global: ``{{ env.NAME }}`` reads the process environment.

promptfoo's Nunjucks engine (src/util/templates.ts ``getNunjucksEngine``) adds ``process.env``
as the global ``env`` to every template it renders (prompts, vars, assertion values), unless
``PROMPTFOO_DISABLE_TEMPLATE_ENV_VARS`` (default: ``PROMPTFOO_SELF_HOSTED``) is true; a
variable that is not set renders as nothing. We do the same, with two rules of our own,
because a rendered prompt is sent to the model and stored (``test_cases.input``):

- a name that looks like a secret (agentv_env.looks_secret: KEY, TOKEN, SECRET, ...) is refused
  where it is read, in one line: its value would be written to DuckDB and reports;
- the names read (never the values) are kept for the load's stored warnings, so a prompt that
  depends on the loading machine's environment is visible in reports.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Iterator, Mapping

from eval_pipelines.formats.agentv.env import looks_secret

# The names read during one load (None outside a load: nothing is recorded).
NAMES_READ: ContextVar[set[str] | None] = ContextVar("promptfoo_env_names_read", default=None)
_TRUE = {"1", "true", "yes", "on"}


class SecretInTemplate(ValueError):
    """A template read a variable that looks like a secret (callers report it as a load error)."""


def _enabled() -> bool:
    """promptfoo's getEnvBool('PROMPTFOO_DISABLE_TEMPLATE_ENV_VARS', PROMPTFOO_SELF_HOSTED)."""
    flag = os.environ.get("PROMPTFOO_DISABLE_TEMPLATE_ENV_VARS")
    if flag is None:
        flag = os.environ.get("PROMPTFOO_SELF_HOSTED", "")
    return flag.strip().lower() not in _TRUE


class EnvironmentView(Mapping[str, str]):
    """The environment as templates see it: read at each lookup, secrets refused, reads recorded."""

    def __getitem__(self, name: str) -> str:
        if not _enabled():
            raise KeyError(name)  # promptfoo: no `env` global, so `env.NAME` renders as nothing
        if looks_secret(name):
            raise SecretInTemplate(f"env.{name} looks like a secret: its value would be sent in the prompt and "
                                   "stored with the test (expected a variable that is not a secret; secrets go "
                                   "to targets through apiKeyEnvar)")
        names = NAMES_READ.get()
        if names is not None:
            names.add(name)
        return os.environ[name]

    def __iter__(self) -> Iterator[str]:
        if not _enabled():
            return iter(())
        return iter(sorted(n for n in os.environ if not looks_secret(n)))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def read_warnings(file: object, names: set[str]) -> list[str]:
    """One stored warning per variable the templates read (its name, and whether it was set)."""
    return [f"{file}: templates read env.{name} from the loading machine's environment "
            f"({'set' if name in os.environ else 'not set: rendered as nothing'}); the stored prompts hold its value"
            for name in sorted(names)]
