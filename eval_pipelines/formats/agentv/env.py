"""AgentV's ``${{ VAR }}``: environment variables interpolated into an eval YAML's strings.

AgentV replaces ``${{ NAME }}`` in every string field of the eval file with the
variable's value, a missing variable giving the empty string. We do the same at
load time, with two rules of our own, because what is interpolated ends up in
stored rows (``test_cases.input``, ``criteria``, ...) and in requests:

- A variable whose name looks like a secret (``TOKEN``, ``SECRET``, ``PASSWORD``,
  ``PASSWD``, ``CREDENTIAL``, ``COOKIE``, ``APIKEY`` anywhere in it, or ``KEY``,
  ``AUTH``, ``SESSION``, ``PAT`` as one ``_``-separated part) is refused: its
  value would be written to DuckDB and reports.
  Secrets belong in ``targets.yaml`` (``api_key_env``), read when a request is made.
- The names used (never the values) are recorded in ``suites.warnings``, and a
  missing variable is a warning too, so a run with an empty criterion is visible.

It applies to the eval YAML itself, not to datasets it includes (AgentV reads
those as data).
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Mapping

PATTERN = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# Long words anywhere in the name; short ones only as a whole `_` segment (AUTHOR_NAME is no secret).
SECRET_WORD = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|COOKIE|APIKEY", re.IGNORECASE)
SECRET_SEGMENTS = {"KEY", "AUTH", "SESSION", "PAT"}


def looks_secret(name: str) -> bool:
    return bool(SECRET_WORD.search(name)) or any(s in SECRET_SEGMENTS for s in name.upper().split("_"))

ErrorAt = Callable[[tuple[Any, ...], str, str], None]


def interpolate(data: Any, error: ErrorAt, environ: Mapping[str, str] | None = None
                ) -> tuple[Any, list[str], list[str]]:
    """(data with ``${{ NAME }}`` replaced, names used, names missing); refusals go to ``error``."""
    env = os.environ if environ is None else environ
    used: list[str] = []
    missing: list[str] = []

    def text(value: str, path: tuple[Any, ...]) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if looks_secret(name):
                error(path, f"${{{{ {name} }}}} looks like a secret and would be stored with the test",
                      "no secrets in suite files: give them to targets through targets.yaml `api_key_env`")
                return match.group(0)
            if name not in used:
                used.append(name)
            if name not in env:
                if name not in missing:
                    missing.append(name)
                return ""
            return env[name]

        return PATTERN.sub(one, value)

    def walk(value: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(value, str):
            return text(value, path) if "${{" in value else value
        if isinstance(value, dict):
            return {k: walk(v, path + (k,)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, path + (i,)) for i, v in enumerate(value)]
        return value

    return walk(data, ()), used, missing
