"""What promptfoo's OpenAI chat provider sends when the config does not say (issue 35, item 6):
src/providers/openai/chat.ts getOpenAiBody, promptfoo 0.121; and an `ollama:` grading provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.formats.loader import load_suite


def targets(tmp_path: Path, providers: str, asserts: str = "") -> dict:
    (tmp_path / "promptfooconfig.yaml").write_text(
        f"prompts: ['{{{{ q }}}}']\nproviders:\n{providers}tests:\n  - vars: {{q: hi}}\n{asserts}")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    return {c["name"]: c for c in suite.target_configs}, suite


def test_chat_models_get_max_tokens_1024_and_temperature_0_reasoning_models_neither(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_MAX_TOKENS", raising=False)
    monkeypatch.delenv("OPENAI_TEMPERATURE", raising=False)
    configs, _ = targets(tmp_path, "  - openai:gpt-4o-mini\n  - openai:chat:o3-mini\n  - openai:gpt-5-nano\n"
                                   "  - {id: openai:gpt-4o, config: {temperature: 0.7, max_tokens: 50}}\n"
                                   "  - {id: openai:o4-mini, config: {max_completion_tokens: 99}}\n"
                                   "  - {id: openai:gpt-4.1, label: bare, config: {omitDefaults: true}}\n")
    assert (configs["openai-gpt-4o-mini"]["temperature"], configs["openai-gpt-4o-mini"]["max_tokens"]) == (0.0, 1024)
    for name in ("openai-chat-o3-mini", "openai-gpt-5-nano"):
        assert configs[name]["temperature"] is None and "max_tokens" not in configs[name]
    assert (configs["openai-gpt-4o"]["temperature"], configs["openai-gpt-4o"]["max_tokens"]) == (0.7, 50)
    assert configs["openai-o4-mini"]["max_completion_tokens"] == 99 and "max_tokens" not in configs["openai-o4-mini"]
    assert configs["bare"]["temperature"] is None and "max_tokens" not in configs["bare"]
    monkeypatch.setenv("OPENAI_MAX_TOKENS", "256")
    monkeypatch.setenv("OPENAI_TEMPERATURE", "0.5")
    configs, _ = targets(tmp_path, "  - openai:gpt-4o-mini\n")
    assert (configs["openai-gpt-4o-mini"]["temperature"], configs["openai-gpt-4o-mini"]["max_tokens"]) == (0.5, 256)


def test_an_ollama_grading_provider_is_ollamas_openai_compatible_api(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_BASE_URL", raising=False)
    rubric = "    assert:\n      - {type: llm-rubric, value: polite, provider: 'ollama:chat:llama3.2'}\n"
    _, suite = targets(tmp_path, "  - echo\n", rubric)
    provider = suite.tests[0].assertions[0].config["provider"]["openai"]
    assert provider["base_url"] == "http://localhost:11434/v1" and provider["model"] == "llama3.2"
    assert provider["max_tokens"] == 1024 and provider["temperature"] == 0.0
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9999")
    _, suite = targets(tmp_path, "  - echo\n", rubric)
    assert suite.tests[0].assertions[0].config["provider"]["openai"]["base_url"] == "http://127.0.0.1:9999/v1"
