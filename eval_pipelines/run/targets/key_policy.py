"""Which hosts may receive a target's API key.

A suite file (a promptfoo provider's ``apiBaseUrl`` + ``apiKeyEnvar``, a skill package's own
``targets.yaml``) chooses both the address a request goes to and the environment variable its
key is read from. Skills are dropped in by other teams and a sensor runs every new version
unattended, so a suite that wrote ``apiBaseUrl: https://collector.example`` next to
``apiKeyEnvar: OPENAI_API_KEY`` would otherwise mail the operator's key to that host.

The rule: a target the suite declared (``declared_by: suite``, set by the loader, never by a
file) sends its key only to

* the address the operator gave through the environment (the target's ``base_url_env``, e.g.
  ``OPENAI_BASE_URL``), or OpenAI's own API when no address is given at all;
* a host the operator lists in ``EVAL_PIPELINES_TRUSTED_HOSTS`` (comma-separated; ``host``,
  ``host:port`` or ``*.domain``), or ``api.openai.com``.

Loopback is not trusted by default: a command target allowed the network can listen on
127.0.0.1, so a suite could point its provider there and read the key. Otherwise the request
goes without any ``Authorization`` header (a local server that needs no key still answers) and
the load stores a warning; a failing call's error row says the key was withheld. Targets in the
operator's own ``targets.yaml`` (the project's, or the current folder's for ``run FILE``) are
not restricted.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

TRUSTED_HOSTS_ENV = "EVAL_PIPELINES_TRUSTED_HOSTS"
ALWAYS_TRUSTED = ("api.openai.com",)


# Only plain URLs can be trusted: scheme, a host name or bracketed IPv6, an optional port, a path
# without `@` or a backslash. Parsers disagree on the rest (with a backslash before `@api.openai.com`
# the HTTP client connects to the host in front, urllib reads api.openai.com): never trusted.
_PLAIN_URL = re.compile(r"(?i)(https?)://([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?(?:/[^@\\\s]*)?")
_ENTRY = re.compile(r"(?i)(\*\.)?([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?")


def _host_port(url: str) -> tuple[str, int] | None:
    match = _PLAIN_URL.fullmatch(url.strip())
    if match is None:
        return None
    scheme, host, port = match.groups()
    return host.lower().rstrip("."), int(port) if port else (443 if scheme.lower() == "https" else 80)


def _trusted(url: str, listed: str | None) -> bool:
    parsed = _host_port(url)
    if parsed is None:
        return False
    host, port = parsed
    for entry in [*ALWAYS_TRUSTED, *(listed or "").split(",")]:
        match = _ENTRY.fullmatch(entry.strip())
        if match is None:
            continue
        wildcard, name, entry_port = match.groups()
        name = name.lower().rstrip(".")
        if entry_port and port != int(entry_port):
            continue
        if (host.endswith("." + name) if wildcard else host == name):
            return True
    return False


def withheld_key_reason(config: Any, env: Mapping[str, str | None]) -> str | None:
    """Why this target's key must not be sent (None: it may be). ``config``: an OpenAITargetConfig
    (not imported: that module calls this one). ``env`` is the environment view
    the connection is resolved from; the decision does not depend on whether the key is set."""
    if config.declared_by != "suite" or config.base_url is None and env.get(config.base_url_env):
        return None  # the operator's own target, or the operator's address
    url = config.base_url or config.base_url_default
    if url is None or _trusted(url, env.get(TRUSTED_HOSTS_ENV)):
        return None  # no address: the OpenAI client's own default (api.openai.com)
    host = url.split("://", 1)[-1].split("/", 1)[0] or url
    return (f"the key in ${config.api_key_env} is not sent to {host}: the suite chose that address and the "
            f"operator has not trusted it (list the host in {TRUSTED_HOSTS_ENV}, or define the target in the "
            f"project's targets.yaml)")
