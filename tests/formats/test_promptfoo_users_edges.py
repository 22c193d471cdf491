"""What promptfoo does at the edges users' configs reach (issue 35, items 2-5, 7, 10), each as
promptfoo 0.121 does it (the module each follows is named in the test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.errors import SpecErrors


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "promptfooconfig.yaml"


def test_file_refs_in_a_tests_file_in_a_subfolder_are_read_from_the_configs_folder(tmp_path: Path) -> None:
    # src/util/file.ts maybeLoadFromExternalFile: relative to cliState.basePath (the config's folder),
    # for the test's vars, its assertion values and the defaultTest values merged into it.
    config = write(tmp_path, {
        "promptfooconfig.yaml": "prompts: ['{{ doc }} - {{ ctx }}']\nproviders: [echo]\n"
                                "defaultTest: {vars: {ctx: file://data/ctx.txt}}\ntests: file://tests/cases.yaml\n",
        "tests/cases.yaml": "- vars: {doc: file://data/doc.txt}\n  assert: [{type: contains, value: file://data/exp.txt}]\n",
        "data/doc.txt": "hello doc\n", "data/ctx.txt": "ctx text\n", "data/exp.txt": "expected text\n"})
    suite, _ = load_suite(config)
    assert suite.tests[0].input[0].content == "hello doc - ctx text"
    assert suite.tests[0].assertions[0].config["value"] == "expected text\n"


def test_a_providers_list_entry_naming_a_yaml_file_holds_the_providers(tmp_path: Path) -> None:
    # src/providers/index.ts loadApiProviders: isProviderConfigFileReference -> loadProvidersFromFile
    config = write(tmp_path, {
        "promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [file://providers.yaml, echo]\ntests: [{vars: {q: x}}]\n",
        "providers.yaml": "- id: openai:gpt-4o-mini\n  label: mini\n- openai:gpt-4o\n"})
    suite, _ = load_suite(config)
    assert suite.execution.targets == ["mini", "openai-gpt-4o", "echo"]
    assert {c["model"] for c in suite.target_configs if c.get("type") == "openai"} == {"gpt-4o-mini", "gpt-4o"}


def test_a_txt_prompt_holding_yaml_chat_messages_is_a_system_and_a_user_message(tmp_path: Path) -> None:
    # src/providers/shared.ts parseChatPrompt: a prompt starting `- role:` is YAML messages
    config = write(tmp_path, {
        "promptfooconfig.yaml": "prompts: [file://prompt.txt]\nproviders: [openai:gpt-4o-mini]\n"
                                "tests: [{vars: {q: 'What is 2+2?'}}]\n",
        "prompt.txt": "- role: system\n  content: You are terse.\n- role: user\n  content: '{{ q }}'\n"})
    suite, _ = load_suite(config)
    assert [(m.role, m.content) for m in suite.tests[0].input] == [("system", "You are terse."),
                                                                   ("user", "What is 2+2?")]


def test_a_prompt_with_a_partial_template_tag_is_sent_verbatim(tmp_path: Path) -> None:
    # src/evaluatorHelpers.ts autoWrapRawIfPartialNunjucks: wrapped in {% raw %}, not an error
    config = write(tmp_path, {"promptfooconfig.yaml": "prompts: ['Fill in: {{ name and {% if']\nproviders: [echo]\n"
                                                      "tests: [{vars: {name: x}}]\n"})
    suite, _ = load_suite(config)
    assert suite.tests[0].input[0].content == "Fill in: {{ name and {% if"


def test_validate_refuses_a_prompt_file_above_the_config_as_run_does(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # `validate` now reads a bare suite file with the policy `run` uses (files beside it or below,
    # and the datasets folder): both refuse `file://../prompt.txt` in the same one line.
    from eval_pipelines.cli import main
    (tmp_path / "prompt.txt").write_text("Say {{ q }}")
    config = write(tmp_path / "skill", {"promptfooconfig.yaml": "prompts: [file://../prompt.txt]\n"
                                                                "providers: [echo]\ntests: [{vars: {q: hi}}]\n"})
    assert main(["validate", str(config), "--root", str(tmp_path)]) != 0
    said_by_validate = capsys.readouterr().out.strip()
    assert main(["run", str(config), "--root", str(tmp_path), "--db", str(tmp_path / "r.duckdb")]) != 0
    said_by_run = capsys.readouterr()
    assert "outside the skill package" in said_by_validate and len(said_by_validate.splitlines()) == 1
    assert said_by_validate.split(": ", 1)[1] in said_by_run.out + said_by_run.err


def test_a_refusal_quoting_a_multi_line_value_is_one_line(tmp_path: Path) -> None:
    value = "\\n".join(f"line {i} of a long value" for i in range(40))
    config = write(tmp_path, {"promptfooconfig.yaml": f"prompts: ['{{{{ q }}}}']\nproviders:\n  - {{openai: \"{value}\"}}\n"
                                                      "tests: [{vars: {q: x}}]\n"})
    with pytest.raises(SpecErrors) as caught:
        load_suite(config)
    line = str(caught.value)
    assert "\n" not in line and "more characters" in line and len(line) < 700
    from eval_pipelines.suite.errors import SpecError
    raw = str(SpecError("c.yaml", ("prompts", 0), "invalid prompt " + "a line\n" * 100, 3))
    assert "\n" not in raw and "more characters" in raw


def test_a_provider_transform_runs_before_the_tests_on_every_assertion(tmp_path: Path) -> None:
    # src/evaluator.ts runEval: provider.transform, then the test's options.transform
    import duckdb

    from eval_pipelines.cli import main
    config = write(tmp_path / "s", {"promptfooconfig.yaml": """\
prompts: ['{{ q }}']
providers: [{id: echo, transform: 'output.toUpperCase()'}]
tests:
  - vars: {q: hello}
    assert: [{type: equals, value: HELLO}]
  - vars: {q: hi}
    options: {transform: 'output + "!"'}
    assert: [{type: equals, value: HI!}]
"""})
    assert main(["run", str(config), "--root", str(tmp_path), "--db", str(tmp_path / "r.duckdb")]) == 0
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        assert con.execute("SELECT bool_and(passed), count(*) FROM grades").fetchone() == (True, 2)
    two = write(tmp_path / "t", {"promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders:\n"
                                 "  - {id: echo, label: a, transform: 'output.trim()'}\n  - {id: echo, label: b}\n"
                                 "tests: [{vars: {q: x}, assert: [{type: equals, value: x}]}]\n"})
    with pytest.raises(SpecErrors) as caught:
        load_suite(two)
    assert "providers with different `transform`s" in str(caught.value)
