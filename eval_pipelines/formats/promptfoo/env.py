"""promptfoo's top-level ``env``: environment variables the config sets for its providers.

promptfoo (src/util/config/load.ts ``renderConfigEnvTemplates``, src/envars.ts ``getEnvString``)
renders ``{{ env.NAME }}`` in the values and lets them override ``process.env`` for every
provider. Secrets never come from files here, so an entry is honoured only as follows:

* a value that refers to the environment (``$NAME``, ``${NAME}``, ``{{ env.NAME }}``): for
  ``OPENAI_API_KEY`` the OpenAI-compatible providers without ``apiKeyEnvar`` read their key from
  ``NAME``; for ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE_URL`` they read their base URL from
  ``NAME`` (when they set none). An entry naming itself (``OPENAI_API_KEY: $OPENAI_API_KEY``)
  changes nothing and is a stored warning. (promptfoo renders only ``{{ env.NAME }}``; a bare
  ``$NAME`` is read here as the reference it is written as.)
* a literal value: ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE_URL`` (a URL) and ``OPENAI_API_HOST``
  (a host) become the base URL of the OpenAI-compatible providers that set none; a name that
  looks like a secret (KEY, TOKEN, SECRET, PASSWORD) is refused in one line.
* anything else (a variable nothing here reads) is refused: it would have no effect.
"""

from __future__ import annotations

import re
from typing import Any

from eval_pipelines.run.targets.config import SECRET_NAME
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.providers import Provider
from eval_pipelines.suite.source import Document

_REFERENCE = re.compile(r"^\s*(?:\$([A-Za-z_]\w*)|\$\{([A-Za-z_]\w*)\}|\{\{\s*env\.([A-Za-z_]\w*)\s*\}\})\s*$")
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
BASE_URL_NAMES = ("OPENAI_BASE_URL", "OPENAI_API_BASE_URL")


def reference(value: Any) -> str | None:
    """The variable a value refers to (``$NAME``, ``${NAME}``, ``{{ env.NAME }}``), else None."""
    match = _REFERENCE.match(value) if isinstance(value, str) else None
    return next(g for g in match.groups() if g) if match else None


def apply_env(ctx: LoadContext, doc: Document, raw: Any, providers: list[Provider]) -> None:
    """Apply ``env`` to the providers' targets (errors and warnings recorded)."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        ctx.error(doc, ("env",), f"got {type(raw).__name__}", "a mapping of variable names to values")
        return
    openai = [p for p in providers if (p.config or {}).get("type") == "openai"]
    for name, value in raw.items():
        name = str(name)
        path = ("env", name)
        ref = reference(value)
        if ref == name:
            ctx.warnings.append(f"{doc.file}: env.{name}: refers to itself; no effect ({name} is read "
                                "from the environment as it is)")
        elif ref is not None and name == "OPENAI_API_KEY":
            _set(openai, "api_key_env", ref, unless="api_key_env")
        elif ref is not None and name in BASE_URL_NAMES and SECRET_NAME.search(ref):
            ctx.error(doc, path, f"{ref} looks like a secret: its value would be the address requests go to",
                      f"`{name}: $VARIABLE` naming the variable that holds the base URL")
        elif ref is not None and name in BASE_URL_NAMES:
            _set(openai, "base_url_env", ref, unless="base_url")
        elif ref is None and any(word in name.upper() for word in SECRET_WORDS):
            ctx.error(doc, path, f"a literal value for {name} (a secret) is not accepted",
                      f"`{name}: ${name}` or the variable set in the environment: secrets never come from files")
        elif ref is None and name in BASE_URL_NAMES and isinstance(value, str) and "://" in value:
            _set(openai, "base_url", value, unless="base_url")
        elif ref is None and name == "OPENAI_API_HOST" and isinstance(value, str) and value.strip():
            _set(openai, "base_url", f"https://{value.strip()}/v1", unless="base_url")
        else:
            ctx.error(doc, path, f"setting {name} from the config is not supported (nothing here reads it)",
                      "OPENAI_API_KEY or OPENAI_BASE_URL as `$NAME`, or a base URL; other variables "
                      "set in the environment")
            continue
        if not openai and name != reference(value):
            ctx.warnings.append(f"{doc.file}: env.{name}: no OpenAI-compatible provider reads it")


def _set(providers: list[Provider], key: str, value: str, unless: str) -> None:
    for provider in providers:
        assert provider.config is not None
        if unless not in provider.config:
            provider.config = {**provider.config, key: value}
