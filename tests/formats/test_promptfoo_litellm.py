"""promptfoo's ``litellm:`` providers: its OpenAI provider with LiteLLM's defaults
(src/providers/litellm.ts ``createLiteLLMProvider``): the base URL is ``config.apiBaseUrl``, else
``LITELLM_API_BASE``, else ``http://0.0.0.0:4000``; the key comes from ``LITELLM_API_KEY``."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.run.targets.config import OpenAITargetConfig, resolve_connection
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect


def load(tmp_path: Path, body: str):
    (tmp_path / "promptfooconfig.yaml").write_text(body)
    return load_suite(tmp_path / "promptfooconfig.yaml")


def test_litellm_ids_become_openai_targets_with_litellms_defaults(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, """
prompts: ["{{ q }}"]
providers:
  - litellm:gpt-4.1-mini
  - id: litellm:chat:claude-4-sonnet
    config: {apiBaseUrl: "http://localhost:4000", temperature: 0.2}
  - litellm:embedding:text-embedding-3-large
tests: [{vars: {q: hi}}]
""")
    configs = {c["name"]: c for c in suite.target_configs}
    assert configs["litellm-gpt-4.1-mini"] == {
        "name": "litellm-gpt-4.1-mini", "type": "openai", "model": "gpt-4.1-mini", "temperature": 0.0, "max_tokens": 1024,
        "base_url_env": "LITELLM_API_BASE", "base_url_default": "http://0.0.0.0:4000", "api_key_env": "LITELLM_API_KEY"}
    assert configs["litellm-chat-claude-4-sonnet"] == {
        "name": "litellm-chat-claude-4-sonnet", "type": "openai", "model": "claude-4-sonnet", "temperature": 0.2, "max_tokens": 1024,
        "base_url": "http://localhost:4000", "api_key_env": "LITELLM_API_KEY"}
    # an embedding model is not a model under test: it must come from targets.yaml, as other kinds
    assert "litellm-embedding-text-embedding-3-large" not in configs
    assert any("'litellm-embedding-text-embedding-3-large'" in w and "targets.yaml" in w for w in warnings)


def test_the_base_url_is_the_config_then_the_variable_then_litellms_address() -> None:
    config = OpenAITargetConfig(name="x", model="m", base_url_env="LITELLM_API_BASE",
                                base_url_default="http://0.0.0.0:4000", api_key_env="LITELLM_API_KEY")
    assert resolve_connection(config, {}) == (None, "http://0.0.0.0:4000")
    assert resolve_connection(config, {"LITELLM_API_BASE": "http://proxy:4000", "LITELLM_API_KEY": "k"}) == \
        ("k", "http://proxy:4000")
    assert resolve_connection(config.model_copy(update={"base_url": "http://cfg"}),
                              {"LITELLM_API_BASE": "http://proxy:4000"})[1] == "http://cfg"
    # never OPENAI_API_KEY for a LiteLLM proxy (promptfoo: credentials are not shared across providers)
    assert resolve_connection(config, {"OPENAI_API_KEY": "sk-openai"})[0] is None


def test_a_litellm_grading_provider_is_accepted_and_other_kinds_refused(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
prompts: ["{{ q }}"]
providers: [echo]
tests:
  - vars: {q: hi}
    assert:
      - {type: similar, value: hello, threshold: 0.8, provider: litellm:embedding:text-embedding-3-large}
      - {type: llm-rubric, value: is polite, provider: {id: litellm:gpt-4.1, config: {apiBaseUrl: "http://h:4000"}}}
""")
    similar, rubric = suite.tests[0].assertions
    assert similar.type == "with_provider" and similar.config["provider"] == {
        "ref": "litellm:embedding:text-embedding-3-large", "embedding_model": "text-embedding-3-large",
        "openai": {"name": "litellm-embedding-text-embedding-3-large", "type": "openai",
                   "model": "text-embedding-3-large", "base_url_env": "LITELLM_API_BASE",
                   "base_url_default": "http://0.0.0.0:4000", "api_key_env": "LITELLM_API_KEY"}}
    assert rubric.config["provider"]["openai"]["base_url"] == "http://h:4000"
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\ntests:\n  - vars: {q: hi}\n    assert:\n"
                       "      - {type: llm-rubric, value: ok, provider: 'litellm:completion:m'}\n")
    line = str(caught.value).splitlines()[0]
    assert "grading provider 'litellm:completion:m' is not supported" in line and "litellm:embedding:MODEL" in line


def test_a_litellm_config_runs_against_the_proxy_the_variable_names(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LITELLM_API_BASE", fake_openai.base_url)
    monkeypatch.setenv("LITELLM_API_KEY", "sk-litellm")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-be-sent")
    fake_openai.answers = {"Say hello": "Hello, world"}
    (tmp_path / "promptfooconfig.yaml").write_text("""
prompts: ['Say {{ word }}']
providers: [litellm:chat:fake-model]
tests:
  - vars: {word: hello}
    assert:
      - {type: icontains, value: hello}
      - {type: similar, value: 'Hello, world', threshold: 0.99, provider: litellm:embedding:fake-embedder}
""")
    monkeypatch.chdir(tmp_path)
    code = main(["run", "promptfooconfig.yaml", "--db", str(tmp_path / "r.duckdb")])
    assert code == ExitCode.OK, capsys.readouterr()
    with connect(tmp_path / "r.duckdb") as con:
        grades = con.execute("SELECT assertion_index, passed, status FROM grades ORDER BY assertion_index").fetchall()
    assert grades == [(0, True, "graded"), (1, True, "graded")]  # the same text embeds to the same vector: cosine 1
    assert [(p, b.get("model")) for p, b in zip(fake_openai.paths, fake_openai.requests)] == [
        ("/v1/chat/completions", "fake-model"), ("/v1/embeddings", "fake-embedder")]  # output and reference in one
    assert {h.get("authorization") for h in fake_openai.headers} == {"Bearer sk-litellm"}
