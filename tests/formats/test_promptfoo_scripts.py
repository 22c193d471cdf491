"""promptfoo's load-time code, run in the sandbox: function prompts (src/prompts/processors/
{javascript,python}.ts, called by src/evaluatorHelpers.ts renderPrompt with ``{vars, provider}``).

Each test writes the config and the script it loads; the expected prompts are what promptfoo's
renderPrompt makes of the function's return value (a string as it is, an object as JSON, which
a chat-message list then is; the result rendered as a template)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect

JS_PROMPT = """\
module.exports = async function ({ vars, provider }) {
  return [
    { role: 'system', content: `You answer in ${vars.language}.` },
    { role: 'user', content: `${vars.question} (for ${provider.id}) {{ extra }}` },
  ];
};
module.exports.shout = ({ vars }) => `${vars.question.toUpperCase()}!`;
"""
PY_PROMPT = """\
import os

def build(context):
    v = context["vars"]
    return f"{v['question']} in {v['language']}; key={os.environ.get('SECRET_TOKEN', 'none')}"

def as_object(context):
    return {"prompt": [{"role": "user", "content": context["vars"]["question"]}]}
"""
LEGACY_PY = """\
import json, sys
context = json.loads(sys.argv[1])
print("Legacy: " + context["vars"]["question"])
"""


def write_config(folder: Path, prompts: str, provider: str = "echo", extra: str = "") -> Path:
    (folder / "prompt.js").write_text(JS_PROMPT)
    (folder / "prompt.py").write_text(PY_PROMPT)
    (folder / "legacy.py").write_text(LEGACY_PY)
    config = folder / "promptfooconfig.yaml"
    config.write_text(f"prompts: {prompts}\nproviders: [{provider}]\n{extra}"
                      "tests:\n  - vars: {question: why is the sky blue, language: French, extra: ok}\n"
                      "    assert: [{type: contains, value: blue}]\n")
    return config


def messages(case) -> list[tuple[str, str]]:  # noqa: ANN001
    return [(m.role, m.content) for m in case.input]


def test_js_and_python_function_prompts_are_called_in_the_sandbox(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "sk-must-not-leak")
    config = write_config(tmp_path, "[file://prompt.js, 'file://prompt.js:shout', 'file://prompt.py:build', "
                                    "'file://prompt.py:as_object', file://legacy.py]")
    suite, _ = load_suite(config)
    by_prompt = {c.metadata["prompt"]: messages(c) for c in suite.tests}
    assert by_prompt == {
        # the JS default export: chat messages, each content rendered as a template afterwards
        "prompt.js": [("system", "You answer in French."), ("user", "why is the sky blue (for echo) ok")],
        "prompt.js:shout": [("user", "WHY IS THE SKY BLUE!")],
        # the sandbox gives the script no secrets from our environment
        "prompt.py:build": [("user", "why is the sky blue in French; key=none")],
        "prompt.py:as_object": [("user", "why is the sky blue")],  # {prompt: ...}: the prompt
        "legacy.py": [("user", "Legacy: why is the sky blue")],  # no function: the script's stdout
    }


def test_a_function_prompt_as_a_message_content(tmp_path: Path) -> None:
    config = write_config(tmp_path, "[{label: chat, messages: [{role: system, content: 'Be brief.'}, "
                                    "{role: user, content: 'file://prompt.js:shout'}]}]")
    suite, _ = load_suite(config)
    assert messages(suite.tests[0]) == [("system", "Be brief."), ("user", "WHY IS THE SKY BLUE!")]


@pytest.mark.parametrize(("script", "expected"), [
    ("def build(context):\n    raise ValueError('no prompt today')\n", "ValueError: no prompt today"),
    ("def build(context):\n    return 42\n", "prompt.py:build returned int"),
    ("def other(context):\n    return 'x'\n", "no function 'build' in prompt.py"),
    ("import time\ndef build(context):\n    print('x' * 2_000_000)\n", "printed more than 1000000 bytes"),
    # only the script is in its sandbox directory: the config's folder is not readable from there
    ("def build(context):\n    return open('promptfooconfig.yaml').read()\n", "FileNotFoundError"),
])
def test_a_failing_function_prompt_is_a_one_line_error_naming_the_file(tmp_path: Path, script: str,
                                                                      expected: str) -> None:
    config = write_config(tmp_path, "['file://prompt.py:build']")
    (tmp_path / "prompt.py").write_text(script)
    with pytest.raises(SpecErrors) as caught:
        load_suite(config)
    line = str(caught.value).splitlines()[0]
    assert "promptfooconfig.yaml" in line and "tests[0]" in line and expected in line, line
    assert "Traceback" not in str(caught.value)


def test_typescript_and_missing_function_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "p.ts").write_text("export default () => 'x';\n")
    for prompts, expected in [("[file://p.ts]", "TypeScript file p.ts is not run"),
                              ("['file://gone.js:build']", "file not found: file://gone.js")]:
        with pytest.raises(SpecErrors) as caught:
            load_suite(write_config(tmp_path, prompts))
        assert expected in str(caught.value).splitlines()[0]


def test_a_function_prompt_must_not_differ_between_the_providers_of_a_case(tmp_path: Path) -> None:
    config = write_config(tmp_path, "[file://prompt.js]", provider="{id: echo, label: a}, {id: echo, label: b}")
    (tmp_path / "prompt.js").write_text("module.exports = ({ provider }) => `hi ${provider.label}`;\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(config)
    assert "gives different prompts for the test's providers" in str(caught.value).splitlines()[0]
    (tmp_path / "prompt.js").write_text("module.exports = ({ provider }) => `hi ${provider.id}`;\n")
    suite, _ = load_suite(config)  # both are `echo`: one prompt for both targets
    assert {messages(c)[0][1] for c in suite.tests} == {"hi echo"}


def test_run_sends_the_function_prompts_to_the_model(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    provider = ("{id: 'openai:chat:fake-model', config: {apiBaseUrl: '" + fake_openai.base_url
                + "', apiKeyEnvar: FAKE_KEY}}")
    write_config(tmp_path, "[file://prompt.js, 'file://prompt.py:build', '{{ context }}']", provider=provider,
                 extra="defaultTest: {vars: {context: file://ctx.py}}\n")
    (tmp_path / "ctx.py").write_text(VAR_PY)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db)])
    out = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), out
    sent = sorted([(m["role"], m["content"]) for m in body["messages"]]
                  for body in fake_openai.requests if body and "messages" in body)
    assert sent == sorted([
        [("system", "You answer in French."), ("user", "why is the sky blue (for openai:chat:fake-model) ok")],
        [("user", "why is the sky blue in French; key=none")],
        [("user", "context for why is the sky blue / {{ con")],  # a variable from a script
    ])
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM model_outputs").fetchone()[0] == 3


# ---- variables from scripts (renderPrompt's file://x.py / x.js values) --------------------------

VAR_PY = """\
def get_var(var_name, prompt, other_vars):
    return {"output": f"  {var_name} for {other_vars['question']} / {prompt[:6]}  \\n"}
"""
VAR_JS = """\
module.exports = async (varName, prompt, vars, provider) =>
  ({ output: `${varName}: ${vars.context} via ${provider.id}` });
"""


def test_variables_from_python_and_js_scripts(tmp_path: Path) -> None:
    (tmp_path / "ctx.py").write_text(VAR_PY)
    (tmp_path / "ctx.js").write_text(VAR_JS)
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['Use {{ context }} | {{ summary }}']\nproviders: [echo]\n"
        "tests:\n  - vars: {question: why, context: file://ctx.py, summary: file://ctx.js}\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    case, = suite.tests
    # Python output trimmed; the JS script sees the variables filled before it, and the provider.
    assert case.metadata["vars"] == {"question": "why", "context": "context for why / Use {{",
                                     "summary": "summary: context for why / Use {{ via echo"}
    assert messages(case) == [("user", "Use context for why / Use {{ | summary: context for why / Use {{ via echo")]


@pytest.mark.parametrize(("script", "ref", "expected"), [
    ("def get_var(n, p, o):\n    return {'error': 'no index'}\n", "file://v.py", "v.py returned an error: no index"),
    ("def get_var(n, p, o):\n    return {'output': ''}\n", "file://v.py", "v.py returned no output"),
    ("def get_var(n, p, o):\n    return {'output': 'x'}\n", "file://v.py:get_var", "a function name in a variable script"),
    ("", "file://v.ts", "TypeScript file v.ts is not run"),
])
def test_a_failing_variable_script_is_a_one_line_error(tmp_path: Path, script: str, ref: str, expected: str) -> None:
    (tmp_path / "v.py").write_text(script)
    (tmp_path / "promptfooconfig.yaml").write_text(
        f"prompts: ['{{{{ v }}}}']\nproviders: [echo]\ntests:\n  - vars: {{v: '{ref}'}}\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    line = str(caught.value).splitlines()[0]
    assert "tests[0].vars.v" in line and expected in line, line


# ---- generated tests (testCaseReader's file://x.py[:fn] / x.js[:fn] entries) ---------------------

GEN_PY = """\
def generate_tests(config=None):
    n = (config or {}).get("n", 1)
    return [{"vars": {"q": f"q{i}"}, "assert": [{"type": "contains", "value": f"q{i}"}]} for i in range(n)]

class Gen:
    @staticmethod
    def bad():
        return {"vars": {}}
"""
GEN_JS = """\
module.exports = [{ vars: { q: 'from js' }, description: 'exported list' }];
module.exports.make = async (config) => [{ vars: { q: `made ${config.tag}` } }];
"""


def test_generated_tests_from_python_and_js(tmp_path: Path) -> None:
    (tmp_path / "gen.py").write_text(GEN_PY)
    (tmp_path / "gen.js").write_text(GEN_JS)
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['Say {{ q }}']\nproviders: [echo]\ntests:\n"
        "  - file://gen.py\n"  # generate_tests() without config
        "  - {path: 'file://gen.py:generate_tests', config: {n: 2}}\n"
        "  - file://gen.js\n"  # a non-function export is the tests themselves
        "  - {path: 'file://gen.js:make', config: {tag: x}}\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    assert [messages(c)[0][1] for c in suite.tests] == ["Say q0", "Say q0", "Say q1", "Say from js", "Say made x"]
    assert [a.config["value"] for a in suite.tests[2].assertions] == ["q1"]
    assert suite.tests[3].description == "exported list"


@pytest.mark.parametrize(("entry", "expected"), [
    ("file://gen.py:Gen.bad", "gen.py:Gen.bad returned dict (expected a list of test cases)"),
    ("file://gen.py:nope", "no function 'nope' in gen.py"),
    ("{path: file://tests.yaml, config: {n: 1}}", "`config` is read only for generated tests"),
    ("file://gen.ts", "TypeScript file gen.ts is not run"),
])
def test_failing_generated_tests_are_one_line_errors(tmp_path: Path, entry: str, expected: str) -> None:
    (tmp_path / "gen.py").write_text(GEN_PY)
    (tmp_path / "tests.yaml").write_text("- vars: {q: a}\n")
    (tmp_path / "promptfooconfig.yaml").write_text(f"prompts: ['{{{{ q }}}}']\nproviders: [echo]\ntests:\n  - {entry}\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    line = str(caught.value).splitlines()[0]
    assert "tests[0]" in line and expected in line, line


def test_a_bad_generated_test_names_the_script(tmp_path: Path) -> None:
    (tmp_path / "gen.py").write_text("def generate_tests():\n    return [{'vars': {'q': 1}, 'asserts': []}]\n")
    (tmp_path / "promptfooconfig.yaml").write_text("prompts: ['{{ q }}']\nproviders: [echo]\ntests: file://gen.py\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    line = str(caught.value).splitlines()[0]
    assert "gen.py" in line and "did you mean 'assert'" in line, line


# ---- options.transformVars (evaluator.ts: the test's variables transformed before rendering) -----

def test_transform_vars_inline_and_from_files(tmp_path: Path) -> None:
    (tmp_path / "t.js").write_text("module.exports.shout = (vars, context) => ({ q: vars.q.toUpperCase() });\n")
    (tmp_path / "t.py").write_text("def get_transform(vars, context):\n"
                                   "    return {'id': context['uuid'][:0] + 'py', 'q': vars['q'] + '?'}\n")
    (tmp_path / "promptfooconfig.yaml").write_text("""\
prompts: ['{{ q }} {{ extra }}']
providers: [echo]
defaultTest: {options: {transformVars: '{...vars, extra: "default"}'}}
tests:
  - vars: {q: one}
  - vars: {q: two}
    options:
      transformVars: |
        const extra = context.prompt && vars.q.length;
        return { extra };
  - vars: {q: three}
    options: {transformVars: 'file://t.js:shout'}
  - vars: {q: four}
    options: {transformVars: file://t.py}
""")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    # one line: an expression; several: a function body; the result merged over the variables
    assert [messages(c)[0][1] for c in suite.tests] == ["one default", "two 3", "THREE ", "four? "]
    assert suite.tests[3].metadata["vars"] == {"q": "four?", "id": "py"}


@pytest.mark.parametrize(("transform", "expected"), [
    ("'[1, 2]'", "transformVars returned list (expected an object of variables)"),
    ("'vars.nope.deeper'", "inline-transformVars.js failed in the sandbox: exited with 1: Cannot read properties of undefined"),
    ("file://t.ts", "TypeScript file t.ts is not run"),
])
def test_transform_vars_failures_are_one_line(tmp_path: Path, transform: str, expected: str) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(
        f"prompts: ['{{{{ q }}}}']\nproviders: [echo]\ntests:\n  - vars: {{q: x}}\n"
        f"    options: {{transformVars: {transform}}}\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    line = str(caught.value).splitlines()[0]
    assert "tests[0].options.transformVars" in line and expected in line, line
    # AgentV v5 (the same loader under AgentV's names) does not run it
    (tmp_path / "suite.yaml").write_text("name: s\nprompts: ['{{ q }}']\ntarget: echo\ntests:\n  - id: a\n"
                                         "    vars: {q: x}\n    options: {transformVars: '{...vars}'}\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "suite.yaml")
    assert "transformVars" in str(caught.value) and "not supported" in str(caught.value)


def test_parts_of_a_json_chat_prompt_are_typed_or_joined(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text('[{"role": "user", "content": [{"type": "input_text", "text": "See {{ q }}"},'
                                     ' {"type": "input_image", "image_url": "{{ url }}"}]}]')
    (tmp_path / "t.json").write_text('[{"role": "user", "content": [{"type": "input_text", "text": "See {{ q }}"},'
                                     ' {"type": "text", "text": "twice"}]}]')
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [file://p.json]\nproviders: [echo]\ntests: [{vars: {q: x, url: 'http://i'}}]\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")  # an image part is kept (test_promptfoo_media.py)
    assert messages(suite.tests[0]) == [("user", "See x\n[image: http://i]")]
    assert [p.type for p in suite.tests[0].input[0].parts or []] == ["text", "image_url"]
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [file://t.json]\nproviders: [echo]\ntests: [{vars: {q: x}}]\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    assert messages(suite.tests[0]) == [("user", "See x\ntwice")]  # text parts only: one text message
    assert suite.tests[0].input[0].parts is None
