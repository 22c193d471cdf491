"""``OpenAITarget`` against the local fake server, through the real ``openai`` client."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import openai
import pytest

import eval_pipelines.run.targets.openai_compat as openai_compat
from eval_pipelines.suite.models import Message
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.run.targets.openai_compat import OpenAITarget
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.timeout(120)  # a hang guard, generous for a loaded machine

SECRET = "sk-test-SECRET-123"


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "BACKOFF_BASE_S", 0.01)


def _config(**overrides: Any) -> OpenAITargetConfig:
    settings: dict[str, Any] = {"name": "t", "model": "m", "max_retries": 2, "timeout_s": 5}
    settings.update(overrides)
    return OpenAITargetConfig(**settings)


def _request(content: str = "hi", *, test_id: str = "t1", timeout_s: float = 5) -> TargetRequest:
    return TargetRequest(
        test_id=test_id,
        trial=0,
        system_prompt="sys",
        messages=[Message(role="user", content=content)],
        timeout_s=timeout_s,
    )


def _generate(
    server: FakeOpenAIServer,
    request: TargetRequest | None = None,
    *,
    api_key: str = "sk-test",
    **config: Any,
) -> tuple[ModelOutput, float]:
    """One ``generate`` call on a fresh target; returns (output, elapsed seconds)."""

    async def main() -> tuple[ModelOutput, float]:
        target = OpenAITarget(_config(**config), api_key=api_key, base_url=server.base_url)
        try:
            started = time.perf_counter()
            out = await target.generate(request or _request())
            return out, time.perf_counter() - started
        finally:
            await target.aclose()

    return asyncio.run(main())


# -- plain answers ---------------------------------------------------------------


def test_plain_answer_output_tokens_and_cost(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.answers["What is the capital of France?"] = "The capital is Paris"
    out, _ = _generate(
        fake_openai,
        _request("What is the capital of France?"),
        price_input_per_million=2.0,
        price_output_per_million=10.0,
    )

    assert out.error is None
    assert out.output == "The capital is Paris"
    assert (out.test_id, out.target, out.trial) == ("t1", "t", 0)
    # Fake usage counts words: "sys" + 6 words in, 4 words out.
    assert out.prompt_tokens == 7
    assert out.completion_tokens == 4
    assert out.cost_usd == pytest.approx((7 * 2.0 + 4 * 10.0) / 1_000_000)
    assert out.llm_calls == 1
    assert out.attempts == 1
    assert out.latency_ms is not None and out.latency_ms > 0

    assert fake_openai.request_count == 1
    assert fake_openai.paths == ["/v1/chat/completions"]
    body = fake_openai.requests[0]
    assert body["model"] == "m"
    assert body["temperature"] == 0.0
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    assert fake_openai.headers[0]["authorization"] == "Bearer sk-test"


def test_default_responder_echoes_and_custom_responder(fake_openai: FakeOpenAIServer) -> None:
    out, _ = _generate(fake_openai, _request("echo me please"))
    assert out.output == "echo me please"
    assert out.cost_usd is None  # no prices configured: unknown, not free

    fake_openai.responder = lambda body: f"{len(body['messages'])} messages"
    out, _ = _generate(fake_openai, _request("anything"), max_tokens=16)
    assert out.output == "2 messages"
    assert fake_openai.requests[-1]["max_tokens"] == 16


def test_prose_fault_returns_plain_prose(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.plan("prose")
    out, _ = _generate(fake_openai, _request("Score this answer as JSON"))
    assert out.error is None
    assert out.output == fake_openai.prose_text
    assert not out.output.lstrip().startswith("{")


# -- retries -----------------------------------------------------------------------


def test_429_retry_after_is_honoured(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.retry_after_s = 0.2
    fake_openai.plan("429")
    out, elapsed = _generate(fake_openai)

    assert out.error is None
    assert out.output == "hi"
    assert fake_openai.request_count == 2
    assert out.attempts == 2 and out.llm_calls == 1
    # Backoff alone would be <= 0.01 s; only Retry-After explains the wait.
    assert elapsed >= 0.18


@pytest.mark.parametrize("first", ["500", "503", "429-no-retry-after", "reset"])
def test_transient_failure_then_success(fake_openai: FakeOpenAIServer, first: str) -> None:
    fake_openai.plan(first)
    out, _ = _generate(fake_openai)

    assert out.error is None
    assert out.output == "hi"
    assert fake_openai.request_count == 2
    assert fake_openai.faults_served == [first, "ok"]
    assert out.attempts == 2


@pytest.mark.parametrize("status", ["400", "401"])
def test_client_errors_are_not_retried(fake_openai: FakeOpenAIServer, status: str) -> None:
    fake_openai.plan(status, "ok")
    out, _ = _generate(fake_openai, max_retries=4)

    assert out.output is None
    assert out.error is not None and f"HTTP {status}" in out.error
    assert "after 1 attempt" in out.error
    assert fake_openai.request_count == 1
    assert out.attempts == 1 and out.llm_calls == 1


def test_exhausted_retries_give_error_row(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.plan("500", "500", "500", "ok")
    out, _ = _generate(fake_openai, max_retries=2)

    assert out.output is None
    assert out.error is not None
    assert "500" in out.error
    assert "3 attempt" in out.error
    assert out.attempts == 3 and out.llm_calls == 1
    assert fake_openai.request_count == 3  # the trailing "ok" was never reached
    assert out.prompt_tokens is None and out.cost_usd is None


def test_timeout_ends_as_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.hang_s = 60.0  # far beyond any slowness of a loaded machine
    fake_openai.plan("timeout", "timeout")
    out, elapsed = _generate(fake_openai, _request(timeout_s=0.2), max_retries=1, timeout_s=0.2)

    assert out.output is None
    assert out.error is not None and "Timeout" in out.error
    assert "2 attempt" in out.error
    assert fake_openai.request_count == 2
    assert 0.35 <= elapsed < 30  # two 0.2 s timeouts, never the 60 s hang


def test_timeout_then_success(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.hang_s = 60.0
    fake_openai.plan("timeout")
    out, elapsed = _generate(fake_openai, _request(timeout_s=0.2), timeout_s=0.2)

    assert out.error is None and out.output == "hi"
    assert out.attempts == 2
    assert elapsed < 30  # the client gave up on the 60 s hang


@pytest.mark.parametrize("fault", ["truncated", "not-json"])
def test_unreadable_body_is_retried(fake_openai: FakeOpenAIServer, fault: str) -> None:
    fake_openai.plan(fault)
    out, _ = _generate(fake_openai)

    assert out.error is None
    assert out.output == "hi"
    assert fake_openai.request_count == 2
    assert out.attempts == 2


@pytest.mark.parametrize("fault", ["truncated", "not-json", "reset"])
def test_persistent_unreadable_body_is_error(fake_openai: FakeOpenAIServer, fault: str) -> None:
    fake_openai.plan(fault, fault, fault)
    out, _ = _generate(fake_openai, max_retries=2)

    assert out.output is None
    assert out.error
    assert "3 attempt" in out.error
    assert fake_openai.request_count == 3


# -- secrets -------------------------------------------------------------------------


def test_api_key_never_in_error_text(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.plan("401")
    out, _ = _generate(fake_openai, api_key=SECRET)

    # The server did receive the key and echoed it in its 401 body ...
    assert fake_openai.headers[0]["authorization"] == f"Bearer {SECRET}"
    # ... but the stored error only shows it masked.
    assert out.output is None
    assert out.error is not None and "HTTP 401" in out.error
    assert "***" in out.error
    assert SECRET not in out.error
    assert SECRET not in repr(out)


# -- throughput ------------------------------------------------------------------------


def test_concurrent_requests_overlap() -> None:
    latency = 0.2
    with FakeOpenAIServer(latency_s=latency) as server:

        async def main() -> list[ModelOutput]:
            target = OpenAITarget(_config(), api_key="sk-test", base_url=server.base_url)
            gate = asyncio.Semaphore(10)

            async def one(i: int) -> ModelOutput:
                async with gate:
                    return await target.generate(_request(f"question {i}", test_id=f"t{i}"))

            try:
                return await asyncio.gather(*(one(i) for i in range(40)))
            finally:
                await target.aclose()

        started = time.perf_counter()
        outputs = asyncio.run(main())
        elapsed = time.perf_counter() - started

        assert server.request_count == 40
    assert [o.output for o in outputs] == [f"question {i}" for i in range(40)]
    assert all(o.error is None for o in outputs)
    # Overlap is counted at the server: up to ten at once, never more.
    assert 2 <= server.max_in_flight <= 10, server.max_in_flight
    # Ten at a time needs at least 4 rounds of the latency.
    assert elapsed >= 4 * latency * 0.9


def test_requests_per_minute_spaces_calls(fake_openai: FakeOpenAIServer) -> None:
    async def main() -> float:
        target = OpenAITarget(
            _config(requests_per_minute=600), api_key="sk-test", base_url=fake_openai.base_url
        )
        try:
            started = time.perf_counter()
            await asyncio.gather(*(target.generate(_request(f"q{i}")) for i in range(3)))
            return time.perf_counter() - started
        finally:
            await target.aclose()

    elapsed = asyncio.run(main())
    assert fake_openai.request_count == 3
    assert elapsed >= 0.18  # slots at 0, 0.1 and 0.2 s


# -- the fake server itself ---------------------------------------------------------------


def test_fake_server_fault_rate_is_deterministic() -> None:
    def served(seed: int) -> list[str]:
        with FakeOpenAIServer(fault_rate=0.5, faults=["500", "503"], seed=seed) as server:
            client = openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)
            try:
                for i in range(12):
                    try:
                        client.chat.completions.create(
                            model="m", messages=[{"role": "user", "content": f"q{i}"}]
                        )
                    except openai.InternalServerError:
                        pass
            finally:
                client.close()
            return list(server.faults_served)

    first = served(7)
    assert first == served(7)
    assert {"500", "503"} & set(first)
    assert "ok" in first


def test_fake_server_embeddings_and_reset_counts(fake_openai: FakeOpenAIServer) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)
    try:
        result = client.embeddings.create(model="emb", input=["alpha", "beta", "alpha"])
    finally:
        client.close()
    vectors = [d.embedding for d in result.data]
    assert len(vectors) == 3 and all(len(v) == fake_openai.embedding_dim for v in vectors)
    assert vectors[0] == vectors[2] and vectors[0] != vectors[1]
    assert result.usage.prompt_tokens == 3
    assert fake_openai.paths == ["/v1/embeddings"]

    fake_openai.reset_counts()
    assert fake_openai.request_count == 0 and fake_openai.requests == []


def test_fake_server_rejects_unknown_fault_names() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        FakeOpenAIServer(fail_plan=["418"])


def test_the_targets_timeout_s_bounds_each_attempt(fake_openai: FakeOpenAIServer) -> None:
    """Issue 19: `timeout_s: 0.3` in targets.yaml holds even when the case allows 30 s."""
    fake_openai.hang_s = 60.0
    fake_openai.plan("timeout", "timeout")
    out, elapsed = _generate(fake_openai, _request(timeout_s=30), max_retries=1, timeout_s=0.3)
    assert out.output is None and out.error is not None and "Timeout" in out.error
    assert "2 attempt" in out.error and fake_openai.request_count == 2
    assert elapsed < 29  # two attempts ended by the target's 0.3 s, not one by the case's 30 s


def test_calls_to_offered_tools_keep_arguments_that_are_no_json_object_raw() -> None:
    """A provider's own tools are not answered; their calls' arguments are read as answered calls'
    are (tools.parse_arguments): a list, a cut-off body or a hostile deep nesting stays `_raw`."""
    from eval_pipelines.run.targets.openai_compat import Reply, offered_tool_output

    deep = "[" * 100_000 + "]" * 100_000
    bodies = ['{"a": 1}', "[1, 2]", '{"a": ', deep, ""]
    reply = Reply(content=None, tool_calls=[{"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": b}}
                                            for i, b in enumerate(bodies)], prompt_tokens=1, completion_tokens=1)
    output, trace = offered_tool_output(reply)
    assert [t["args"] for t in trace] == [{"a": 1}, {"_raw": "[1, 2]"}, {"_raw": '{"a": '}, {"_raw": deep}, {}]
    assert all(t["answered"] is False and t["result"] is None for t in trace)
    assert [c["function"]["arguments"] for c in json.loads(output)] == bodies  # the output keeps them as sent
