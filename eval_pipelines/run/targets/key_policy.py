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

from typing import Any, Mapping
from urllib.parse import urlsplit

TRUSTED_HOSTS_ENV = "EVAL_PIPELINES_TRUSTED_HOSTS"
ALWAYS_TRUSTED = ("api.openai.com",)


def _trusted(url: str, listed: str | None) -> bool:
    parts = urlsplit(url if "://" in url else f"https://{url}")
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:  # an unreadable port: not a host anyone listed
        return False
    for entry in [*ALWAYS_TRUSTED, *(listed or "").split(",")]:
        entry = entry.strip().lower()
        if not entry:
            continue
        name, _, entry_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if entry_port and (not entry_port.isdigit() or port != int(entry_port)):
            continue
        if name == host or (name.startswith("*.") and host.endswith(name[1:])):
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
    host = urlsplit(url if "://" in url else f"https://{url}").netloc or url
    return (f"the key in ${config.api_key_env} is not sent to {host}: the suite chose that address and the "
            f"operator has not trusted it (list the host in {TRUSTED_HOSTS_ENV}, or define the target in the "
            f"project's targets.yaml)")
