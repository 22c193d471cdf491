"""promptfoo's ``env`` template global (src/util/templates.ts adds process.env as ``env``):
the value reaches the stored prompt, an unset variable renders as nothing, a secret is refused,
PROMPTFOO_DISABLE_TEMPLATE_ENV_VARS turns it off, and the names read are stored warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite

CORPUS = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"


def load(tmp_path: Path, prompt: str, assertion: str = "") -> tuple[str, list[str]]:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: [{prompt!r}]\nproviders: [echo]\n"
                      f"tests: [{{vars: {{q: hi}}{', assert: [' + assertion + ']' if assertion else ''}}}]\n")
    suite, warnings = load_suite(config)
    return suite.tests[0].input[-1].content, warnings


def test_a_variable_of_the_environment_reaches_the_prompt_and_is_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EP_TEST_REGION", "eu-west-3")
    text, warnings = load(tmp_path, "{{ q }} from {{ env.EP_TEST_REGION }}")
    assert text == "hi from eu-west-3"
    read = [w for w in warnings if "env.EP_TEST_REGION" in w]
    assert len(read) == 1 and "(set)" in read[0] and "eu-west-3" not in read[0]  # the name, never the value


def test_an_unset_variable_renders_as_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EP_TEST_UNSET", raising=False)
    text, warnings = load(tmp_path, "[{{ env.EP_TEST_UNSET }}] {{ q }}")
    assert text == "[] hi"  # Nunjucks without throwOnUndefined, as promptfoo renders
    assert any("env.EP_TEST_UNSET" in w and "not set" in w for w in warnings)


def test_a_secret_is_refused_in_one_line_without_its_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-store-me")
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, "{{ q }} {{ env.OPENAI_API_KEY }}")
    message = str(caught.value)
    assert "env.OPENAI_API_KEY looks like a secret" in message.splitlines()[0]
    assert "sk-do-not-store-me" not in message and "Traceback" not in message


def test_iterating_the_environment_skips_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EP_TEST_TOKEN", "t0ps3cret")
    monkeypatch.setenv("EP_TEST_PLAIN", "visible")
    text, _ = load(tmp_path, "{% for k, v in env.items() %}{% if k.startswith('EP_TEST_') %}{{ k }}={{ v }};"
                             "{% endif %}{% endfor %}")
    assert text == "EP_TEST_PLAIN=visible;"


def test_assertion_values_see_the_environment_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EP_TEST_WORD", "bonjour")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['{{ q }}']\nproviders: [echo]\n"
                      "tests: [{vars: {q: hi}, assert: [{type: contains, value: '{{ env.EP_TEST_WORD }}'}]}]\n")
    suite, _ = load_suite(config)
    assert suite.tests[0].assertions[0].config["value"] == "bonjour"


def test_promptfoo_s_switch_turns_the_global_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EP_TEST_REGION", "eu-west-3")
    monkeypatch.setenv("PROMPTFOO_DISABLE_TEMPLATE_ENV_VARS", "true")
    text, warnings = load(tmp_path, "{{ q }}:{{ env.EP_TEST_REGION }}")
    assert text == "hi:" and not any("env.EP_TEST_REGION" in w for w in warnings)


def test_the_real_example_that_reads_the_environment_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    # openai-codex-app-server/skills/skill-input.json reads {{env.CODEX_SKILL_CREATOR_PATH}}.
    monkeypatch.setenv("CODEX_SKILL_CREATOR_PATH", "skills/skill-creator")
    suite, warnings = load_suite(CORPUS / "openai-codex-app-server" / "skills" / "promptfooconfig.yaml")
    assert '"path": "skills/skill-creator"' in suite.tests[0].input[-1].content
    assert any("env.CODEX_SKILL_CREATOR_PATH" in w for w in warnings)
