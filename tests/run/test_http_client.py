"""The HTTP client under ``OpenAITarget`` (run/targets/http_client.py): what its construction builds."""

from __future__ import annotations

import asyncio
import ssl

import httpx2
import pytest

from eval_pipelines.run.targets.base import TargetRequest
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.run.targets.http_client import aiohttp_client
from eval_pipelines.run.targets.openai_compat import OpenAITarget
from eval_pipelines.suite.models import Message
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.timeout(60)  # a hang guard


def _no_ssl_context(**_kwargs: object) -> ssl.SSLContext:
    raise AssertionError("an http:// client built an SSL context")


def test_http_target_builds_no_ssl_context_and_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpx2, "create_ssl_context", _no_ssl_context)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    request = TargetRequest(test_id="t1", trial=0, system_prompt=None, messages=[Message(role="user", content="hi")], timeout_s=5)
    with FakeOpenAIServer() as server:
        async def main() -> str | None:
            target = OpenAITarget(OpenAITargetConfig(name="t", model="m", timeout_s=5),
                                  api_key="sk-test", base_url=server.base_url)
            output = await target.generate(request)
            assert output.error is None, output.error
            return output.output

        assert asyncio.run(main())


def test_https_clients_share_one_verified_context() -> None:
    first, second = aiohttp_client("https://api.example.com/v1"), aiohttp_client(None)
    contexts = {id(client._transport.ssl_context) for client in (first, second)}
    assert len(contexts) == 1
    context = first._transport.ssl_context
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED


def test_http_client_keeps_proxies_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = aiohttp_client("http://127.0.0.1:9/v1")
    proxies = [transport.proxy for transport in client._mounts.values() if transport is not None]
    assert [str(proxy.url) for proxy in proxies] == ["http://proxy.invalid:3128"]
