"""The HTTP client under every ``openai.AsyncOpenAI`` a target or judge builds.

The SDK's ``openai.DefaultAioHttpClient`` (aiohttp transport), with two costs of
its construction cut (issue 33, measured with py-spy on ``eval-pipelines run``):

- Each client built its own verified SSL context (``httpx2.create_ssl_context``:
  CA certificates read from disk, ~20 ms), once per target and judge, so once
  per Dagster partition. The context is now built once per process and shared;
  it is the same context the SDK builds, so https behaves as before.
- Building that context imports ``httpcore2`` (and with it trio, h11, anyio:
  ~0.15-0.35 s of a fresh process) even for a plain ``http://`` base URL
  (a local server, the benchmark, the tests), which never opens TLS. Such a
  client gets a transport without a context of its own: the SDK's aiohttp
  transport, minus ``create_ssl_context``; an https redirect it follows is
  verified with aiohttp's own default context (system CA store).

Proxies from the environment keep the SDK's own proxy transports (``mounts``).
"""

from __future__ import annotations

import functools
import ssl
from typing import Any

import httpx2
import openai
from openai._vendor.httpx_aiohttp import AiohttpTransport


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The verified context ``DefaultAioHttpClient`` builds by default, built once per process."""
    return httpx2.create_ssl_context(verify=True, trust_env=True)


class _PlainHttpTransport(AiohttpTransport):
    """``AiohttpTransport`` for an ``http://`` base URL: no SSL context of its own."""

    def __init__(self, limits: httpx2.Limits) -> None:  # noqa: D107 - the parent's fields, set as it sets them
        # Not super().__init__: that builds the context (and imports httpcore2) first thing.
        # ``True`` is aiohttp's default: its own verified context, built when aiohttp was imported.
        self.ssl_context = True  # type: ignore[assignment]
        self.proxy = None
        self.limits = limits
        self.retries = 0
        self.socket_options = []
        self.uds = None
        self.local_address = None
        self.client = None


class _AioHttpClient(openai.DefaultAioHttpClient):  # type: ignore[misc, valid-type]
    def __init__(self, *, plain_http: bool, **kwargs: Any) -> None:
        self._plain_http = plain_http  # read by _init_transport, which the parent's __init__ calls
        super().__init__(**kwargs)

    def _init_transport(self, *args: Any, **kwargs: Any) -> Any:
        if self._plain_http and kwargs.get("transport") is None:
            return _PlainHttpTransport(kwargs.get("limits", openai.DEFAULT_CONNECTION_LIMITS))
        return super()._init_transport(*args, **kwargs)


def is_plain_http(base_url: str | None) -> bool:
    return bool(base_url) and str(base_url).lower().startswith("http://")


def aiohttp_client(base_url: str | None) -> openai.DefaultAioHttpClient:
    """``openai.DefaultAioHttpClient()`` for a client that talks to ``base_url`` (None: the SDK's default URL)."""
    if is_plain_http(base_url):
        # The verify setting reaches only proxy transports (mounts), which keep the SDK's behaviour.
        return _AioHttpClient(plain_http=True)
    return _AioHttpClient(plain_http=False, verify=shared_ssl_context())
