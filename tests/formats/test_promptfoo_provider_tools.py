"""A provider's ``config.tools`` (promptfoo's OpenAI chat provider): offered to the model as
written, not answered; the model's calls are the output (src/providers/openai/chat.ts: calls
alone give the list of calls, text and calls the whole message), handed to javascript
assertions and transforms as data, and is-valid-openai-tools-call checks them against those
tools. Measured on promptfoo's own openai-tools-call example."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples" / "openai-tools-call"


def test_the_example_offers_its_tools_and_checks_calls_against_them() -> None:
    suite, warnings = load_suite(EXAMPLE / "promptfooconfig.yaml")
    target = suite.target_configs[0]
    assert [t["function"]["name"] for t in target["tools"]] == ["get_current_weather"]
    assert any("config: reasoning_effort, verbosity not applied" in w for w in warnings)  # not tools
    check = suite.tests[0].assertions[1]
    assert check.type == "openai_tools_call" and check.config["tools"] == target["tools"]


def test_function_tool_callbacks_are_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [hi]\nproviders:\n  - id: openai:chat:m\n    config:\n      tools: []\n"
        "      functionToolCallbacks: {add: file://add.js}\ntests: [{vars: {}}]\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    line = str(caught.value).splitlines()[0]
    assert "providers[0].config.functionToolCallbacks" in line and "not supported" in line


def test_the_example_runs_with_promptfoos_semantics(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLE / "promptfooconfig.yaml", tmp_path / "promptfooconfig.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def weather(city: str) -> dict:
        return {"tool_calls": [{"id": "call_1", "name": "get_current_weather", "arguments": {"location": city}}]}

    fake_openai.answers = {"What is the weather like in Boston?": weather("Boston, MA"),
                           "What is the weather like in New York?": weather("New York, NY"),
                           "What is the weather like in Paris?": weather("Paris, France"),
                           "What is the weather like in Mars?": "There is no weather service for Mars."}
    code = main(["run", "promptfooconfig.yaml", "--db", str(tmp_path / "r.duckdb")])
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), capsys.readouterr()
    with connect(tmp_path / "r.duckdb") as con:
        outputs = dict(con.execute("SELECT test_id, output FROM model_outputs").fetchall())
        grades = con.execute("SELECT test_id, assertion_index, passed, status, reason FROM grades "
                             "WHERE test_id IN ('test-1', 'test-2', 'test-3') "
                             "ORDER BY test_id, assertion_index").fetchall()
    chat = [b for p, b in zip(fake_openai.paths, fake_openai.requests) if p.endswith("chat/completions")]
    sut = [b for b in chat if b["model"] == "gpt-6-luna"]
    assert len(sut) == 4 and all(b["tools"][0]["function"]["name"] == "get_current_weather" for b in sut)
    # the calls alone are the output: the list of calls (promptfoo's `output = message.tool_calls`)
    assert json.loads(outputs["test-1"])[0]["function"] == {"name": "get_current_weather",
                                                            "arguments": '{"location": "Boston, MA"}'}
    assert outputs["test-4"] == "There is no weather service for Mars."
    # Boston: is-json, is-valid-openai-tools-call, output[0].function.name, the parsed arguments;
    # New York: options.transform output[0].function.name, then equals; Paris: the same per assertion,
    # and similar on the transformed location (the fake embeds equal texts equally)
    assert [(t, i, passed) for t, i, passed, _, _ in grades] == [
        ("test-1", 0, True), ("test-1", 1, True), ("test-1", 2, True), ("test-1", 3, True),
        ("test-2", 0, True), ("test-3", 0, True), ("test-3", 1, True)], grades


def test_tool_choice_is_sent_with_the_tools(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Text and calls together: the output is the whole message, as promptfoo's chat provider gives it."""
    monkeypatch.chdir(tmp_path)
    fake_openai.answers = {"Add 2 and 3": {"content": "Calling add.", "tool_calls": [
        {"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}]}}
    tools = [{"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}}]
    (tmp_path / "promptfooconfig.yaml").write_text(f"""
prompts: ['Add {{{{ a }}}} and {{{{ b }}}}']
providers:
  - id: openai:chat:calc
    config:
      apiBaseUrl: '{fake_openai.base_url}'
      tools: {json.dumps(tools)}
      tool_choice: required
tests:
  - vars: {{a: 2, b: 3}}
    assert:
      - type: is-valid-openai-tools-call
      - type: javascript
        value: output.content === 'Calling add.' && output.tool_calls[0].function.name === 'add'
""")
    code = main(["run", "promptfooconfig.yaml", "--db", str(tmp_path / "r.duckdb")])
    assert code == ExitCode.OK, capsys.readouterr()
    assert fake_openai.requests[0]["tool_choice"] == "required" and fake_openai.requests[0]["tools"] == tools
    with connect(tmp_path / "r.duckdb") as con:
        assert con.execute("SELECT passed FROM grades ORDER BY assertion_index").fetchall() == [(True,), (True,)]
