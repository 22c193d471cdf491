"""promptfoo configs loaded into the internal model: prompts, providers, tests, options.

Expected values follow promptfoo's documentation (site/docs/configuration/*) and
source (src/csv.ts for CSV cells); each test writes the config it loads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.cli import main as cli_main
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import detect_format, load_skill, load_suite
from eval_pipelines.formats.promptfoo.cases import assertion_from_string
from eval_pipelines.suite.source import load_document
from eval_pipelines.store.tables import StoredSuite
from tests.support.stages import model_outputs


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder / next(iter(files))


def load(tmp_path: Path, config: str, **files: str):
    path = write(tmp_path, {"promptfooconfig.yaml": config, **{k.replace("__", "."): v for k, v in files.items()}})
    return load_suite(path)


def one_line_error(tmp_path: Path, config: str, **files: str) -> str:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, config, **files)
    text = str(caught.value)
    assert text and "Traceback" not in text
    return text.splitlines()[0]


# ---- prompts and templating ------------------------------------------------------------


def test_inline_prompts_render_each_test_with_jinja2(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
prompts:
  - "Translate to {{ language | upper }}: {{input}}{% if polite %} please{% endif %}"
  - "{{ missing }}[{{ input }}]"
providers: [echo]
tests:
  - vars: {language: French, input: Hello, polite: true}
""")
    assert [c.id for c in suite.tests] == ["test-1-p1", "test-1-p2"]
    assert suite.tests[0].input[0].content == "Translate to FRENCH: Hello please"
    assert suite.tests[1].input[0].content == "[Hello]"  # undefined renders empty, as in Nunjucks
    assert suite.format == "promptfoo" and suite.scoring == "all_pass"
    assert suite.tests[0].metadata["vars"] == {"language": "French", "input": "Hello", "polite": True}


def test_chat_prompts_from_yaml_json_and_text_files(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
prompts:
  - file://chat.json
  - file://chat.yaml
  - file://many.txt
  - - role: system
      content: "Be {{ tone }}."
    - role: user
      content: "{{ q }}"
providers: [echo]
tests:
  - vars: {tone: brief, q: 'Why blue?'}
""", chat__json='[{"role": "system", "content": "Tone: {{ tone }}"}, {"role": "user", "content": {{ q | dump }}}]',
        chat__yaml="- role: user\n  content: 'Q: {{ q }}'\n", many__txt="First {{ q }}\n---\nSecond {{ tone }}\n")
    inputs = [[(m.role, m.content) for m in c.input] for c in suite.tests]
    assert inputs == [
        [("system", "Tone: brief"), ("user", "Why blue?")],  # JSON rendered, then parsed as messages
        [("user", "Q: Why blue?")],
        [("user", "First Why blue?")],
        [("user", "Second brief")],
        [("system", "Be brief."), ("user", "Why blue?")],
    ]
    assert [c.metadata["prompt"] for c in suite.tests] == ["chat.json", "chat.yaml", "many.txt#1", "many.txt#2",
                                                          "prompt-4"]


def test_template_syntax_error_is_one_line_and_fails_only_that_prompts_cases(tmp_path: Path) -> None:
    # promptfoo renders per eval, inside the eval's try: its evals fail, the config runs
    (tmp_path / "promptfooconfig.yaml").write_text("prompts: ['Hi {{ name }', 'Bye {{ name }}']\n"
                                                   "providers: [echo]\ntests: [{vars: {name: x}}]\n")
    suite, warnings = load_suite(tmp_path / "promptfooconfig.yaml")
    said = [w for w in warnings if "template does not parse" in w]
    assert len(said) == 1 and "prompts[0]" in said[0] and "\n" not in said[0]
    assert "template does not parse" in suite.tests[0].fails_with and "\n" not in suite.tests[0].fails_with
    assert suite.tests[1].fails_with is None and suite.tests[1].input[0].content == "Bye x"
    # a filter failing on the data (JSON.parse of text) fails that eval too
    (tmp_path / "promptfooconfig.yaml").write_text("prompts: ['{{ x | load }}']\nproviders: [echo]\n"
                                                   "tests: [{vars: {x: not json}}, {vars: {x: '[1]'}}]\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    assert "does not render: Expecting value" in suite.tests[0].fails_with and suite.tests[1].fails_with is None


def test_function_prompts_name_their_file_when_it_is_absent(tmp_path: Path) -> None:
    # Function prompts run in the sandbox (tests/formats/test_promptfoo_scripts.py); a missing one is named.
    line = one_line_error(tmp_path, "prompts: [file://gone.js:build]\nproviders: [echo]\ntests: [{vars: {}}]\n")
    assert "prompts[0]: file not found: file://gone.js" in line


def test_csv_prompt_files_follow_promptfoo(tmp_path: Path) -> None:
    # src/prompts/processors/csv.ts: a `prompt` column and an optional `label` column (values trimmed);
    # a file without a comma holds one prompt per line after an optional `prompt` header.
    suite, warnings = load(tmp_path, """
prompts: [file://p.csv, file://lines.csv]
providers: [echo]
tests: [{vars: {topic: tea}}]
""", p__csv='prompt,label,notes\n"Tell me about {{topic}}","Basic" ,x\n'
            '"[{""role"":""system"",""content"":""Be brief.""},{""role"":""user"",""content"":""{{topic}}?""}]",,y\n',
        lines__csv="prompt\nHaiku on {{topic}}\n\nLimerick on {{topic}}\n")
    assert [(c.metadata["prompt"], [(m.role, m.content) for m in c.input]) for c in suite.tests] == [
        ("Basic", [("user", "Tell me about tea")]),
        ('Prompt 2 - [{"role":"system","content":"Be brief."},{"role":"user","content":"{{topic}}?"}]',
         [("system", "Be brief."), ("user", "tea?")]),
        ("Prompt 1 - Haiku on {{topic}}", [("user", "Haiku on tea")]),
        ("Prompt 2 - Limerick on {{topic}}", [("user", "Limerick on tea")]),
    ]
    assert [w for w in warnings if "p.csv: columns notes are not read" in w]


def test_a_csv_prompt_file_without_prompts_is_one_line(tmp_path: Path) -> None:
    line = one_line_error(tmp_path, "prompts: [file://p.csv]\nproviders: [echo]\ntests: [{vars: {}}]\n",
                          p__csv="text,label\nhello,a\n")
    assert "prompts[0]" in line and "p.csv holds no prompt" in line


# ---- providers --------------------------------------------------------------------------


def test_providers_become_targets(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, """
prompts: ["{{ q }}"]
providers:
  - openai:chat:gpt-4o-mini
  - openai:gpt-4o
  - id: openai:chat:llama3
    label: local-llama
    config: {apiBaseUrl: "http://127.0.0.1:8000/v1", apiKeyEnvar: LOCAL_KEY, temperature: 0.3, max_tokens: 99,
             top_p: 0.9}
  - echo
  - 'exec: python3 run.py'
  - file://provider.py
  - anthropic:messages:claude-sonnet
tests: [{vars: {q: hi}}]
""", provider__py="def call_api(prompt, options, context):\n    return {'output': prompt[::-1]}\n")
    configs = {c["name"]: c for c in suite.target_configs}
    assert suite.execution.targets == ["openai-chat-gpt-4o-mini", "openai-gpt-4o", "local-llama", "echo",
                                       "exec-python3-run.py", "file-provider.py", "anthropic-messages-claude-sonnet"]
    assert configs["openai-chat-gpt-4o-mini"] | {} == {"name": "openai-chat-gpt-4o-mini", "type": "openai",
                                                       "model": "gpt-4o-mini", "temperature": 0.0,
                                                       "max_tokens": 1024}
    assert configs["openai-gpt-4o"]["model"] == "gpt-4o"
    assert configs["local-llama"] == {"name": "local-llama", "type": "openai", "model": "llama3",
                                      "temperature": 0.3, "base_url": "http://127.0.0.1:8000/v1",
                                      "api_key_env": "LOCAL_KEY", "max_tokens": 99}
    assert configs["echo"]["command"] == ["cat"]
    assert configs["exec-python3-run.py"]["command"][:2] == ["sh", "-c"]
    assert "anthropic-messages-claude-sonnet" not in configs  # must come from targets.yaml
    assert any("top_p not applied" in w for w in warnings)
    assert any("'anthropic-messages-claude-sonnet'" in w and "targets.yaml" in w for w in warnings)


def test_a_literal_api_key_is_refused(tmp_path: Path) -> None:
    line = one_line_error(tmp_path, """
prompts: ["{{ q }}"]
providers: [{id: "openai:chat:x", config: {apiKey: sk-123}}]
tests: [{vars: {q: hi}}]
""")
    assert "providers[0].config.apiKey" in line and "apiKeyEnvar" in line


def test_skill_folder_with_a_promptfoo_config_runs_its_echo_exec_and_python_providers(tmp_path: Path) -> None:
    """Dropped in a skill folder, the config is the skill's suite; script providers run as command targets."""
    skill = tmp_path / "skills" / "echoer" / "1.0.0"
    write(skill, {
        "SKILL.md": "---\nname: echoer\ndescription: Echoes.\nversion: 1.0.0\n---\n",
        "promptfooconfig.yaml": "prompts: ['Say {{ word }}']\nproviders:\n  - echo\n  - 'exec: python3 shout.py'\n"
                                "  - id: file://provider.py:reverse\n    config: {suffix: '!'}\n"
                                "tests:\n  - vars: {word: hi}\n    assert: [{type: contains, value: hi}]\n",
        "shout.py": "import sys\nprint(sys.argv[1].upper())\n",
        "provider.py": "def reverse(prompt, options, context):\n"
                       "    return {'output': prompt[::-1] + options['config']['suffix']}\n",
    })
    loaded = load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "work", project_targets={})
    assert loaded.suite.name == "echoer" and loaded.suite.execution.targets == [
        "echo", "exec-python3-shout.py", "file-provider.py-reverse"]
    outputs = model_outputs(StoredSuite(loaded.suite, loaded.targets, loaded.package.root))
    assert {o.target: (o.output, o.error) for o in outputs} == {
        "echo": ("Say hi", None), "exec-python3-shout.py": ("SAY HI", None),
        "file-provider.py-reverse": ("ih yaS!", None)}


def test_unreachable_provider_needs_a_named_target(tmp_path: Path) -> None:
    skill = tmp_path / "pkg"
    write(skill, {"SKILL.md": "---\nname: pkg\ndescription: d\nversion: 1.0.0\n---\n",
                  "promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [bedrock:claude]\n"
                                          "tests: [{vars: {q: hi}}]\n"})
    with pytest.raises(SpecErrors) as caught:
        load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "work", project_targets={})
    assert len(caught.value.errors) == 1 and "bedrock-claude" in str(caught.value)
    (skill / "targets.yaml").write_text("targets:\n  - {name: bedrock-claude, type: command, command: [cat]}\n")
    loaded = load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "work2", project_targets={})
    assert loaded.targets["bedrock-claude"].type == "command"


# ---- tests, CSV, defaultTest, scenarios ----------------------------------------------------


def test_csv_columns_follow_promptfoo(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, "prompts: ['{{ topic }}']\nproviders: [echo]\ntests: file://t.csv\n", t__csv=(
        "topic,__expected,__expected2,__description,__metadata:area,__metadata:tags[],__threshold,__metric,"
        "__prefix,__suffix\n"
        'ml,contains: algo,"not-icontains:sorry",about ml,tech,"a,b",0.5,quality,<<,>>\n'
        "db,,,,,,,,,\n"))
    first, second = suite.tests
    assert first.input[0].content == "<<ml>>"
    assert first.description == "about ml" and first.threshold == 0.5
    assert first.metadata["area"] == "tech" and first.metadata["tags"] == ["a", "b"]
    assert [(a.type, a.negate, a.name, a.config["value"]) for a in first.assertions] == [
        ("contains", False, "quality", " algo"), ("icontains", True, "quality", "sorry")]
    assert second.assertions == [] and second.threshold is None


def test_unknown_csv_column_is_one_line(tmp_path: Path) -> None:
    line = one_line_error(tmp_path, "prompts: ['{{ a }}']\nproviders: [echo]\ntests: file://t.csv\n",
                          t__csv="a,__providerOutput\nx,y\n")
    assert "t.csv:2" in line and "__providerOutput" in line


@pytest.mark.parametrize(("cell", "expected"), [
    ("Paris", {"type": "equals", "value": "Paris"}),
    ("not-contains:sorry", {"type": "not-contains", "value": "sorry"}),
    ("contains-any: a, b", {"type": "contains-any", "value": ["a", "b"]}),
    ("similar(0.7):hi there", {"type": "similar", "value": "hi there", "threshold": 0.7}),
    ("similar:hi", {"type": "similar", "value": "hi", "threshold": 0.8}),
    # promptfoo gives every threshold type 0.75 when the cell names none (even levenshtein)
    ("levenshtein:abc", {"type": "levenshtein", "value": "abc", "threshold": 0.75}),
    ("is-json", {"type": "is-json"}),
    ("javascript: output.length > 3", {"type": "javascript", "value": "output.length > 3"}),
    ("grade: is polite", {"type": "llm-rubric", "value": " is polite"}),
    ("file://check.py", {"type": "python", "value": "file://check.py"}),
])
def test_assertion_strings_of_csv_cells(cell: str, expected: dict) -> None:
    assert assertion_from_string(cell) == expected


def test_default_test_scenarios_and_variable_expansion(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
prompts: ["{{ lang }}:{{ word }}"]
providers: [echo]
defaultTest:
  vars: {word: cat}
  assert: [{type: contains, value: ":"}]
  metadata: {team: a}
tests:
  - vars: {lang: [fr, de]}
    assert: [{type: icontains, value: "{{ lang }}"}]
  - vars: {lang: [x, y]}
    options: {disableVarExpansion: true}
scenarios:
  - description: animals
    config: [{vars: {word: dog}}, {vars: {word: cow}}]
    tests: [{vars: {lang: it}, description: one}]
""")
    got = [(c.id, c.input[0].content, [a.config["value"] for a in c.assertions]) for c in suite.tests]
    assert got == [
        ("test-1-v1", "fr:cat", [":", "fr"]), ("test-1-v2", "de:cat", [":", "de"]),
        ("test-2", "x,y:cat", [":"]),  # not expanded; printed as Nunjucks prints an array
        ("test-3", "it:dog", [":"]), ("test-4", "it:cow", [":"]),
    ]
    assert suite.tests[3].description == "animals / one" and suite.tests[3].metadata["team"] == "a"


def test_evaluate_options(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, """
prompts: ["{{ q }}"]
providers: [echo]
evaluateOptions: {repeat: 3, maxConcurrency: 2, timeoutMs: 5000, cache: false, showProgressBar: false}
tests: [{vars: {q: hi}}]
""")
    assert suite.execution.trials.count == 3 and suite.execution.cache is False
    assert suite.settings.max_concurrency == 2 and suite.settings.timeout_ms == 5000
    assert any("showProgressBar" in w for w in warnings)


@pytest.mark.parametrize(("config", "needle"), [
    ("env: {OPENAI_API_KEY: x}\n", "env"),
    ("extensions: [file://hooks.js:afterEach]\n", "extensions[0]: afterEach hook file://hooks.js:afterEach is not run"),
    ("evaluateOptions: {delay: -1}\n", "evaluateOptions.delay: invalid delay -1"),
    ("outputPath: out.csv\nderivedMetrics: [{name: f, value: 'function(s) { return 1 }'}]\n",
     "JavaScript functions in derivedMetrics"),
    ("derivedMetrics: [{name: f, value: 'print(a, b)'}]\n",
     "derivedMetrics[0].value: function calls other than abs min max"),
])
def test_unsupported_fields_are_refused_in_one_line(tmp_path: Path, config: str, needle: str) -> None:
    line = one_line_error(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\ntests: [{vars: {q: x}}]\n" + config)
    assert needle in line and "promptfooconfig.yaml" in line


def test_hugging_face_datasets_are_refused_in_one_line(tmp_path: Path) -> None:
    line = one_line_error(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\n"
                                    "tests: ['huggingface://datasets/cais/mmlu?split=test&limit=10']\n")
    assert "tests[0]: Hugging Face datasets (huggingface://datasets/cais/mmlu) are not supported" in line


def test_accepted_but_unused_fields_leave_a_warning(tmp_path: Path) -> None:
    _, warnings = load(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\ntests: [{vars: {q: x}}]\n"
                                 "outputPath: out.json\nsharing: false\n")
    assert any("outputPath" in w for w in warnings) and any("sharing" in w for w in warnings)


def test_vars_reference_vars_and_lose_a_trailing_newline_as_in_promptfoo(tmp_path: Path) -> None:
    # promptfoo's renderPrompt (src/evaluatorHelpers.ts): a text file read as a variable is trimmed,
    # one trailing newline is cut from every text variable, then resolveVariables replaces a
    # variable's `{{ name }}` with the variable `name`.
    suite, _ = load(tmp_path, """
prompts: ['[{{ sentence }}][{{ block }}][{{ from_file }}]']
providers: [echo]
tests:
  - vars: {sentence: 'tweet about {{topic}}', topic: '{{ kind }} bananas', kind: ripe, block: "two\\n\\n",
           from_file: file://v.txt}
""", v__txt="  spaced text \n\n")
    assert suite.tests[0].input[0].content == "[tweet about ripe bananas][two\n][spaced text]"
    assert suite.tests[0].metadata["vars"]["sentence"] == "tweet about ripe bananas"


def test_variable_files_are_read_from_the_config_folder_even_for_tests_from_other_files(tmp_path: Path) -> None:
    # promptfoo's renderPrompt resolves a var's file:// against cliState.basePath (the config's folder).
    suite, _ = load(tmp_path, """
prompts: ['{{ system }} | {{ topic }}']
providers: [echo]
defaultTest: {vars: {system: file://system.txt}}
tests: file://cases/*.yaml
""", system__txt="Be brief.", **{"cases/a__yaml": "- vars: {topic: file://topic.txt}\n"}, topic__txt="tea")
    assert [c.input[0].content for c in suite.tests] == ["Be brief. | tea"]


def test_tests_from_jsonl_yaml_and_globs(tmp_path: Path) -> None:
    config = write(tmp_path, {
        "promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [echo]\n"
                                "tests: [file://cases/*.yaml, file://more.jsonl, {vars: {q: inline}}]\n",
        "cases/a.yaml": "- vars: {q: a1}\n", "cases/b.yaml": "vars: {q: b1}\n",
        "more.jsonl": '{"vars": {"q": "j1"}}\n{"vars": {"q": "j2"}}\n'})
    suite, _ = load_suite(config)
    assert [c.input[0].content for c in suite.tests] == ["a1", "b1", "j1", "j2", "inline"]


# ---- detection and the CLI -----------------------------------------------------------------


def test_detection_by_name_and_by_shape(tmp_path: Path) -> None:
    by_name = write(tmp_path, {"promptfooconfig.yaml": "tests: []\n"})
    by_shape = write(tmp_path, {"translate.yaml": "prompts: [x]\nproviders: [echo]\ntests: [{vars: {}}]\n"})
    agentv = write(tmp_path, {"suite.yaml": "name: s\ntarget: llm\nprompts: ['{{ input }}']\n"
                                            "tests: [{id: a, vars: {input: hi}}]\n"})
    eval_yaml = write(tmp_path, {"eval.yaml": "tests: [{id: a, input: hi}]\n"})
    assert [detect_format(load_document(p)) for p in (by_name, by_shape, agentv, eval_yaml)] == [
        "promptfoo", "promptfoo", "agentv-v5", "eval-yaml"]


def test_validate_prints_one_line_per_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good", {"promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [echo]\n"
                                                              "tests: [{vars: {q: x}}]\n"})
    bad = write(tmp_path / "bad", {"promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [echo]\n"
                                                            "tests: [{vars: {q: x}, assert: [{type: no-such-type}]}]\n"})
    assert cli_main(["validate", str(good)]) == 0
    assert "promptfoo: 1 tests" in capsys.readouterr().out
    assert cli_main(["validate", str(bad)]) == 2
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "tests[0].assert[0].type" in out[0] and "'no-such-type' is not supported" in out[0]


def test_metadata_and_vars_are_json_in_the_model(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\nmetadata: {owner: me}\n"
                              "tests: [{vars: {q: x}, metadata: {k: 1}}]\n")
    assert json.loads(json.dumps(suite.tests[0].metadata)) == {"owner": "me", "k": 1, "vars": {"q": "x"},
                                                               "prompt": "prompt-1"}


def test_variables_from_a_file_and_a_provider_outside_the_package(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, "prompts: ['{{ a }}-{{ b }}']\nproviders: [echo]\ntests: [{vars: file://v.yaml}]\n",
                    v__yaml="a: 1\nb: two\n")
    assert suite.tests[0].input[0].content == "1-two"
    skill = tmp_path / "pkg"
    write(skill, {"SKILL.md": "---\nname: pkg\ndescription: d\nversion: 1.0.0\n---\n",
                  "promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [file://../evil.py]\n"
                                          "tests: [{vars: {q: hi}}]\n"})
    (tmp_path / "evil.py").write_text("def call_api(p, o, c):\n    return {'output': p}\n")
    with pytest.raises(SpecErrors) as caught:
        load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "work", project_targets={})
    assert "outside the skill package" in str(caught.value)


MALFORMED = [
    "prompts: 5\nproviders: [echo]\ntests: [{vars: {}}]\n",
    "prompts: ['x']\nproviders: 5\ntests: [{vars: {}}]\n",
    "prompts: ['x']\nproviders: [echo]\ntests: 5\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: [1, 2]}]\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: {}, assert: [5, {type: 7}, {value: 1}]}]\n",
    "prompts: ['x']\nproviders: [echo]\ndefaultTest: {vars: 3}\ntests: [{vars: {}}]\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: {}, options: 5}]\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: {}, metadata: 3}]\n",
    "prompts: ['x']\nproviders: [echo]\nevaluateOptions: {repeat: -1, maxConcurrency: a}\ntests: [{vars: {}}]\n",
    "prompts: ['x']\nproviders: [{id: 5}]\ntests: [{vars: {}}]\n",
    "prompts: ['x']\nproviders: [echo]\nscenarios: [{config: 5, tests: 3}]\ntests: []\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: {}, assert: [{type: assert-set, assert: 5}]}]\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: {}, assert: [{type: trajectory:tool-used, value: 5}]}]\n",
    "prompts: [{raw: 5}]\nproviders: [echo]\ntests: [{vars: {}}]\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: {}, assert: [{type: llm-rubric, value: a, rubricPrompt: '{{ x | load }}'}]}]\n",
    "prompts: ['x']\nproviders: [echo]\ntests: [{vars: {}, assert: [{$ref: '#/nope'}]}]\n",
]


@pytest.mark.parametrize("config", MALFORMED, ids=[f"case{i}" for i in range(len(MALFORMED))])
def test_malformed_fields_are_one_line_errors_never_a_crash(tmp_path: Path, config: str) -> None:
    line = one_line_error(tmp_path, config)
    assert line.startswith(str(tmp_path)) and ": " in line
