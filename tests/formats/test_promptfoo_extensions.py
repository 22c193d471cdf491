"""promptfoo's ``extensions`` (lifecycle hooks), run in the sandbox when the suite loads.

Expected values come from promptfoo's source and docs: src/evaluatorHelpers.ts runExtensionHook (a
function named after a hook runs for that hook only as ``fn(context, {hookName})``, any other
function for every hook as ``fn(hookName, context)``; beforeAll's returned tests, scenarios,
defaultTest and derivedMetrics are taken back, beforeEach's returned test replaces the test),
src/evaluator.ts (``defaultTest.assert`` is a list before beforeAll; beforeEach gets the test with
defaultTest merged, one variable combination), and the hooks in
site/docs/configuration/reference.md "Extension hooks" (a test added in beforeAll, an ``is-json``
default assertion, ``language`` made ``Pirate <language>`` in beforeEach).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect

# The reference's Python example, reduced to what changes the suite (its prints go to stdout).
PY_HOOKS = """\
import os

def extension_hook(hook_name, context):
    if hook_name == 'beforeAll':
        print('Setting up test suite:', context['suite'].get('description', ''))
        context['suite']['tests'].append({
            'vars': {'body': "It's a beautiful day", 'language': 'Spanish'},
            'assert': [{'type': 'contains', 'value': 'Es un día hermoso.'}],
        })
        context['suite']['defaultTest']['assert'].append({'type': 'is-json'})
        return context
    if hook_name == 'beforeEach':
        context['test']['vars']['language'] = f"Pirate {context['test']['vars']['language']}"
        return context
"""
CONFIG = """\
description: Extension Hook Example
prompts: ['Rephrase this in {{language}}: {{body}}']
providers: [echo]
extensions: [%s]
tests:
  - vars: {body: 'Hello, how are you?', language: [Norwegian, French]}
    assert: [{type: contains, value: Hei}]
"""
# Hook-specific named exports (the new calling convention) in a CommonJS module.
JS_HOOKS = """\
module.exports = {
  beforeAll: async (context, { hookName }) => {
    context.suite.tests = context.suite.tests.filter((t) => t.vars.keep);
    context.suite.tests[0].description = `kept by ${hookName}`;
    return context;
  },
  beforeEach: (context, { hookName }) => {
    context.test.vars.topic = context.test.vars.topic.toUpperCase();
    context.test.metadata = { ...(context.test.metadata || {}), seen_by: hookName };
    return context;
  },
};
"""
JS_CONFIG = """\
prompts: ['Write about {{topic}}']
providers: [echo]
defaultTest: {vars: {tone: dry}}
extensions: ['file://hooks.js:beforeAll', 'file://hooks.js:beforeEach']
tests:
  - vars: {topic: coffee, keep: true}
  - vars: {topic: tea}
"""


def write(folder: Path, config: str, **files: str) -> Path:
    for name, text in files.items():
        (folder / name.replace("__", ".")).write_text(text)
    path = folder / "promptfooconfig.yaml"
    path.write_text(config)
    return path


def one_line_error(path: Path) -> str:
    with pytest.raises(SpecErrors) as caught:
        load_suite(path)
    text = str(caught.value)
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    return text


def test_a_python_hook_adds_a_test_a_default_assertion_and_changes_vars(tmp_path: Path) -> None:
    suite, warnings = load_suite(write(tmp_path, CONFIG % "'file://hooks.py:extension_hook'", hooks__py=PY_HOOKS))
    by_id = {c.id: c for c in suite.tests}
    # beforeEach ran per variable combination (promptfoo expands `language` first), beforeAll added test 2
    assert sorted(by_id) == ["test-1-v1", "test-1-v2", "test-2"]
    assert by_id["test-1-v1"].input[0].content == "Rephrase this in Pirate Norwegian: Hello, how are you?"
    assert by_id["test-1-v2"].metadata["vars"] == {"body": "Hello, how are you?", "language": "Pirate French"}
    assert by_id["test-2"].input[0].content == "Rephrase this in Pirate Spanish: It's a beautiful day"
    # the default assertion the hook appended joins every test's own (defaultTest's first, as merged)
    assert [a.type for a in by_id["test-1-v1"].assertions] == ["is_json", "contains"]
    assert [(a.type, a.config.get("value")) for a in by_id["test-2"].assertions[1:]] == [("contains", "Es un día hermoso.")]
    said = "\n".join(warnings)
    assert "extensions: beforeAll ran in the sandbox when the suite loaded (once per load" in said
    assert "it changed tests, defaultTest" in said
    assert "beforeEach ran in the sandbox when the suite loaded, once per test and variable combination" in said
    assert "it changed 3 of 3 (vars)" in said
    assert "its afterEach and afterAll calls (with the run's results) are not made" in said  # a generic handler


def test_javascript_hook_exports_run_for_their_own_hook(tmp_path: Path) -> None:
    suite, warnings = load_suite(write(tmp_path, JS_CONFIG, hooks__js=JS_HOOKS))
    assert [c.id for c in suite.tests] == ["test-1"]  # beforeAll kept the one test with `keep`
    case = suite.tests[0]
    assert case.description == "kept by beforeAll"  # called as fn(context, {hookName})
    assert case.input[0].content == "Write about COFFEE"
    # the test beforeEach saw had defaultTest merged; what it returned is the case
    assert case.metadata["vars"] == {"tone": "dry", "topic": "COFFEE", "keep": True}
    assert case.metadata["seen_by"] == "beforeEach"
    assert any("it changed 1 of 1 (metadata, vars)" in w for w in warnings)
    assert not any("afterEach and afterAll calls" in w for w in warnings)  # hook-specific entries


def test_a_javascript_default_export_is_called_when_the_named_function_is_not_exported(tmp_path: Path) -> None:
    # The reference's JavaScript example: `module.exports = extensionHook` named as `:extensionHook`
    # (transform.ts falls back to the module itself when it is a function).
    hook = ("async function extensionHook(hookName, context) {\n"
            "  if (hookName === 'beforeEach') { context.test.vars.language = `Pirate ${context.test.vars.language}`;"
            " return context; }\n}\nmodule.exports = extensionHook;\n")
    suite, _ = load_suite(write(tmp_path, CONFIG % "'file://hooks.js:extensionHook'", hooks__js=hook))
    assert [c.metadata["vars"]["language"] for c in suite.tests] == ["Pirate Norwegian", "Pirate French"]


def test_a_hostile_hook_gets_no_secrets_and_no_files_from_the_config_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "sk-must-not-leak")
    (tmp_path / "private.txt").write_text("config-folder secret")
    hook = ("import os\n\ndef beforeEach(context, options):\n"
            "    context['test']['vars']['body'] = os.environ.get('SECRET_TOKEN', 'none')\n"
            "    try:\n        context['test']['vars']['language'] = open('private.txt').read()\n"
            "    except OSError as exc:\n        context['test']['vars']['language'] = type(exc).__name__\n"
            "    return context\n")
    suite, warnings = load_suite(write(tmp_path, CONFIG % "'file://hooks.py:beforeEach'", hooks__py=hook))
    assert not any("beforeAll" in w for w in warnings)  # a beforeEach hook only: nothing ran for beforeAll
    assert {c.metadata["vars"]["body"] for c in suite.tests} == {"none"}
    assert {c.metadata["vars"]["language"] for c in suite.tests} == {"FileNotFoundError"}
    assert not any("sk-must-not-leak" in c.input[0].content for c in suite.tests)


@pytest.mark.parametrize(("hook", "expected"), [
    ("def extension_hook(hook_name, context):\n    raise ValueError('no suite today')\n",
     "hooks.py:extension_hook failed in the sandbox: exited with 1: ValueError: no suite today"),
    ("def other(hook_name, context):\n    return None\n", "no function 'extension_hook' in hooks.py"),
    ("def extension_hook(hook_name, context):\n    return [1, 2]\n",
     "file://hooks.py:extension_hook returned list to beforeAll (expected the context {suite} (or nothing))"),
    ("def extension_hook(hook_name, context):\n    if hook_name == 'beforeAll':\n        return context\n"
     "    return {'test': 'x'}\n", "returned dict to beforeEach (expected the context {test} (or nothing))"),
    ("def extension_hook(hook_name, context):\n    if hook_name == 'beforeAll':\n"
     "        context['suite']['prompts'] = [{'raw': 'Other {{body}}', 'label': 'other'}]\n    return context\n",
     "beforeAll changed the suite's `prompts`, which is not supported"),
    # what beforeEach returns is read like any test: a bad assertion is the usual one-line error
    ("def extension_hook(hook_name, context):\n    if hook_name == 'beforeEach':\n"
     "        context['test']['assert'] = [{'type': 'no-such-type'}]\n    return context\n", "no-such-type"),
])
def test_a_failing_hook_is_one_line_naming_its_file(tmp_path: Path, hook: str, expected: str) -> None:
    line = one_line_error(write(tmp_path, CONFIG % "'file://hooks.py:extension_hook'", hooks__py=hook))
    assert "promptfooconfig.yaml" in line and expected in line, line


@pytest.mark.parametrize(("entry", "expected"), [
    ("python:customPlugin.py", "extensions[0]: extension 'python:customPlugin.py' is not a file:// reference "
                               "(promptfoo runs a string without file:// as inline JavaScript) "
                               "(expected file://path.py:function or file://path.js[:function])"),
    ("file://hooks.rb:extension_hook", "extensions[0]: extension file hooks.rb has an unsupported type"),
    ("file://hooks.ts:beforeAll", "extensions[0]: TypeScript file hooks.ts is not run"),
    ("file://gone.py:extension_hook", "extensions[0]: file not found: file://gone.py"),
    ("file://hooks.js:afterAll", "extensions[0]: afterAll hook file://hooks.js:afterAll is not run: promptfoo "
                                 "calls it with the run's results"),
    ("file://hooks.py:afterEach", "extensions[0]: afterEach hook file://hooks.py:afterEach is not run"),
    ("file://empty.js:beforeEach", 'empty.js must export a function, have a default export as a function, '
                                   'or export the function "beforeEach"'),
])
def test_bad_hook_references_are_one_line(tmp_path: Path, entry: str, expected: str) -> None:
    line = one_line_error(write(tmp_path, CONFIG % f"'{entry}'", hooks__py=PY_HOOKS, hooks__js=JS_HOOKS,
                                hooks__ts="export const beforeAll = () => {};\n", hooks__rb="def x; end\n",
                                empty__js="module.exports = { note: 'no functions' };\n"))
    assert "promptfooconfig.yaml" in line and expected in line, line


def test_extensions_must_be_a_list(tmp_path: Path) -> None:
    line = one_line_error(write(tmp_path, CONFIG.replace("extensions: [%s]", "extensions: file://hooks.py:x")))
    assert "extensions: got str (expected a list of file://path.py:function" in line


def test_a_run_sends_what_the_hooks_made_and_stores_their_warnings(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    provider = ("{id: 'openai:chat:fake-model', config: {apiBaseUrl: '" + fake_openai.base_url
                + "', apiKeyEnvar: FAKE_KEY}}")
    write(tmp_path, CONFIG.replace("providers: [echo]", f"providers: [{provider}]")
          % "'file://hooks.py:extension_hook'", hooks__py=PY_HOOKS)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db)])
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED)
    sent = sorted(m["content"] for body in fake_openai.requests if body and "messages" in body
                  for m in body["messages"])
    assert sent == ["Rephrase this in Pirate French: Hello, how are you?",
                    "Rephrase this in Pirate Norwegian: Hello, how are you?",
                    "Rephrase this in Pirate Spanish: It's a beautiful day"]
    with connect(db) as con:
        stored = json.loads(con.execute("SELECT warnings FROM suites").fetchone()[0])
        assert con.execute("SELECT count(*) FROM test_results").fetchone()[0] == 3
    assert any("beforeAll ran in the sandbox when the suite loaded" in w for w in stored)
    assert any("beforeEach ran in the sandbox when the suite loaded" in w and "it changed 3 of 3 (vars)" in w
               for w in stored)


def test_before_all_scenarios_and_derived_metrics_are_taken_back(tmp_path: Path) -> None:
    # A generic JavaScript handler (module.exports = fn, called fn(hookName, context)): beforeAll
    # replaces the tests with a scenario and adds a derived metric; the suite is what it returned.
    hook = """\
module.exports = (hookName, context) => {
  if (hookName !== 'beforeAll') return;
  context.suite.tests = [];
  context.suite.scenarios = [{config: [{vars: {language: 'Danish'}}, {vars: {language: 'Dutch'}}],
                              tests: [{vars: {body: 'Good morning'}}]}];
  context.suite.derivedMetrics = [{name: 'twice', value: 'greeting * 2'}];
  return context;
};
"""
    suite, warnings = load_suite(write(tmp_path, CONFIG % "'file://hooks.js'", hooks__js=hook))
    assert [c.input[0].content for c in suite.tests] == ["Rephrase this in Danish: Good morning",
                                                         "Rephrase this in Dutch: Good morning"]
    assert [(d.name, d.value) for d in suite.derived_metrics] == [("twice", "greeting * 2")]
    assert any("beforeAll ran" in w and "it changed tests, scenarios, derivedMetrics" in w for w in warnings)
    assert any("it changed 0 of 2" in w for w in warnings)  # it answered nothing to beforeEach
