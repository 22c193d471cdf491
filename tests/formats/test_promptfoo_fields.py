"""promptfoo config fields whose effect, refusal or warning no other test showed
(tests/formats/field_contract.yaml names these tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.formats.promptfoo.config import WARN_KEYS
from eval_pipelines.formats.promptfoo.providers import PROVIDER_KEYS

HEAD = "prompts: ['{{ q }}']\nproviders: [echo]\n"
ONE_TEST = "tests: [{vars: {q: x}}]\n"


def load(tmp_path: Path, config: str, **files: str):
    for name, text in files.items():
        (tmp_path / name.replace("__", ".")).write_text(text)
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(config)
    return load_suite(path)


def refusal(tmp_path: Path, config: str) -> str:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, config)
    assert "Traceback" not in str(caught.value)
    return str(caught.value).splitlines()[0]


def test_suite_description_tags_targets_and_schema(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, """
$schema: https://promptfoo.dev/config-schema.json
description: Translation checks
tags: {team: lang, tier: gold}
prompts: ['{{ q }}']
targets: [echo]
tests: [{vars: {q: x}}]
""")
    assert suite.description == "Translation checks"
    assert suite.tags == ["team:lang", "tier:gold"]
    assert suite.execution.targets == ["echo"] and suite.target_configs[0]["command"] == ["cat"]
    assert warnings == []


def test_assertion_templates_are_reached_by_ref(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, HEAD + """
assertionTemplates:
  saysHi: {type: icontains, value: hi}
tests: [{vars: {q: x}, assert: [{$ref: '#/assertionTemplates/saysHi'}]}]
""")
    assert [(a.type, a.config["value"]) for a in suite.tests[0].assertions] == [("icontains", "hi")]


@pytest.mark.parametrize("key", sorted(WARN_KEYS))
def test_every_warned_top_level_key_is_a_stored_warning(tmp_path: Path, key: str) -> None:
    _, warnings = load(tmp_path, HEAD + ONE_TEST + f"{key}: x\n")
    assert [w for w in warnings if f"{key}: accepted but not used" in w]


def test_per_test_provider_and_threshold(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, HEAD + """
tests:
  - vars: {q: x}
    provider: {id: 'exec: python3 run.py', label: runner}
    threshold: 0.5
  - vars: {q: y}
""")
    first, second = suite.tests
    assert first.targets == ["runner"] and first.threshold == 0.5
    assert second.targets is None and second.threshold is None
    assert {c["name"] for c in suite.target_configs} == {"echo", "runner"}


@pytest.mark.parametrize(("field", "needle"), [
    ("providerOutput: fixed", "providerOutput"),
    ("assert: [{type: contains, value: x, provider: openai:gpt-4o}]", "provider"),
])
def test_unsupported_test_fields_are_refused(tmp_path: Path, field: str, needle: str) -> None:
    line = refusal(tmp_path, HEAD + f"tests:\n  - vars: {{q: x}}\n    {field}\n")
    assert needle in line and "not supported" in line


def test_test_options_postprocess_rubric_prompt_and_warned_options(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, HEAD + """
tests:
  - vars: {q: x}
    options:
      postprocess: output.trim()
      rubricPrompt: 'Grade {{ output }} against {{ rubric }}'
      runSerially: true
      provider: openai:gpt-4o
    assert:
      - {type: contains, value: x}
      - {type: llm-rubric, value: polite}
""")
    contains, judged = suite.tests[0].assertions
    assert contains.type == "transformed" and contains.config["transform"] == ["output.trim()"]
    # options.provider grades the model-graded assertions (promptfoo's grading.provider), not `contains`
    assert judged.type == "with_provider" and judged.config["provider"]["ref"] == "openai:gpt-4o"
    assert judged.config["assert"]["type"] == "transformed"
    assert judged.config["assert"]["assert"]["prompt"] == "Grade {output} against {criteria}"
    assert any("options.runSerially" in w for w in warnings)
    assert not any("options.provider" in w for w in warnings)


def test_assertion_threshold_weight_metric_config_and_rubric_prompt(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, HEAD + """
tests:
  - vars: {q: x}
    assert:
      - {type: rouge-n, value: a b c, threshold: 0.3, weight: 2, metric: overlap}
      - {type: python, value: "len(output) >= context['config']['n']", config: {n: 1}}
      - {type: llm-rubric, value: polite, rubricPrompt: 'Is {{ output }} {{ rubric }}?'}
      - {type: contains, value: x, threshold: 0.9}
      - {type: latency, threshold: 500, value: 100}
""")
    rouge, script, judged, contains, latency = suite.tests[0].assertions
    assert (rouge.type, rouge.config["threshold"], rouge.weight, rouge.name) == ("rouge_n", 0.3, 2, "overlap")
    assert script.config["config"] == {"n": 1}
    assert judged.config["prompt"] == "Is {output} {criteria}?"  # promptfoo's variables, in our judge's names
    assert "threshold" not in contains.config
    assert [w for w in warnings if "assert.3.threshold: accepted but not used" in w]
    assert latency.config == {"max_ms": 500}
    assert [w for w in warnings if "assert.4.value: accepted but not used" in w]
    assert len(warnings) == 2


def test_assert_set_groups_assertions(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, HEAD + """
tests:
  - vars: {q: x}
    assert:
      - type: assert-set
        assert: [{type: contains, value: a}, {type: contains, value: b}]
""")
    group = suite.tests[0].assertions[0]
    assert group.type == "composite" and group.config["aggregator"] == "all"
    assert [a["value"] for a in group.config["assert"]] == ["a", "b"]


def test_openai_provider_api_host_and_max_completion_tokens(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
prompts: ['{{ q }}']
providers: [{id: 'openai:chat:m', config: {apiHost: llm.example.org, max_completion_tokens: 7}}]
tests: [{vars: {q: x}}]
""")
    config = suite.target_configs[0]
    # promptfoo sends max_completion_tokens to reasoning models only; `m` gets its default max_tokens
    assert config["base_url"] == "https://llm.example.org/v1" and config["max_tokens"] == 1024


@pytest.mark.parametrize("key", sorted(PROVIDER_KEYS - {"id", "label", "config", "prompts", "delay", "transform"}))
def test_unsupported_provider_fields_are_refused(tmp_path: Path, key: str) -> None:
    line = refusal(tmp_path, f"prompts: ['{{{{ q }}}}']\nproviders: [{{id: echo, {key}: x}}]\n" + ONE_TEST)
    assert f"provider `{key}` is not supported" in line


def test_prompts_as_mappings_with_raw_id_and_label(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
prompts:
  - {raw: 'Say {{ q }}', label: say}
  - {id: file://ask.txt, label: ask}
providers: [echo]
tests: [{vars: {q: x}}]
""", ask__txt="Ask {{ q }}")
    assert [(c.metadata["prompt"], c.input[0].content) for c in suite.tests] == [("say", "Say x"), ("ask", "Ask x")]
    line = refusal(tmp_path, "prompts: [{raw: hi, config: {temperature: two}}]\nproviders: [echo]\n" + ONE_TEST)
    assert "config.temperature" in line  # a prompt's own config: test_promptfoo_loader_features


def test_prompts_as_label_and_messages_with_file_contents(tmp_path: Path) -> None:
    # promptfoo's examples/chat-messages-format: {label, messages}, each content a template or
    # a file:// file read as a template, in the order written; a TypeScript file there is refused
    # (a .js/.py one is a function prompt: tests/formats/test_promptfoo_scripts.py).
    suite, _ = load(tmp_path, """
prompts:
  - label: chat
    messages:
      - {role: system, content: file://system.j2}
      - {role: user, content: 'Explain {{ topic }}'}
      - {role: assistant, content: file://answer.json}
providers: [echo]
tests: [{vars: {topic: recursion, domain: CS}}]
""", system__j2="You know {{ domain }}.", answer__json='{"topic": "{{ topic }}"}')
    case, = suite.tests
    assert case.metadata["prompt"] == "chat"
    assert [(m.role, m.content) for m in case.input] == [
        ("system", "You know CS."), ("user", "Explain recursion"), ("assistant", '{"topic": "recursion"}')]
    line = refusal(tmp_path, "prompts: [{label: x, messages: [{role: user, content: file://p.ts}]}]\n"
                   "providers: [echo]\n" + ONE_TEST)
    assert "prompts[0].messages[0].content: TypeScript file p.ts is not run" in line


def test_a_prompt_file_field_is_refused_with_the_form_promptfoo_reads(tmp_path: Path) -> None:
    # examples/openai-audio/promptfooconfig-advanced: {id, label, file}. promptfoo's normalizeInput
    # takes `raw || id` as the prompt and ignores `file`: the prompt would be the id's own text.
    line = refusal(tmp_path, "prompts: [{id: audio-io, label: A, file: ./prompt.json}]\nproviders: [echo]\n"
                   + ONE_TEST)
    assert "prompts[0].file: `file` is not a promptfoo prompt field" in line
    assert "'audio-io'" in line and "id: file://prompt.json" in line


def test_conversation_relevance_judges_promptfoos_sliding_windows(tmp_path: Path) -> None:
    # promptfoo (deepeval.ts, docs model-graded/conversation-relevance): with `_conversation`, one
    # window per turn holding it and up to windowSize-1 turns before it; the score is the share of
    # windows whose last reply is relevant; threshold 0.5 when omitted; without it, one turn.
    suite, _ = load(tmp_path, """
prompts: ['{{ q }}']
providers: [echo]
tests:
  - vars: {q: hi}
    assert: [{type: conversation-relevance}]
  - vars:
      q: hi
      _conversation:
        - {input: 'What is 2+2?', output: '4.'}
        - {input: 'And 3+3?', output: 'Paris.'}
        - {input: 'And 5+5?', output: '10.'}
    assert: [{type: conversation-relevance, threshold: 0.8, config: {windowSize: 2}}]
""")
    single, multi = (c.assertions[0] for c in suite.tests)
    assert (single.type, single.config["threshold"]) == ("llm_judge", 0.5)
    assert "Score 1 when it is relevant, 0 when it is not" in single.config["rubric"]
    rubric = multi.config["rubric"]
    assert multi.config["threshold"] == 0.8 and "divided by 3, the number of windows" in rubric
    windows = rubric.split("Window ")[1:]
    assert [w.count("User:") for w in windows] == [1, 2, 2]
    assert "What is 2+2?" not in windows[2] and "Paris." in windows[1] and "10." in windows[2]
    line = refusal(tmp_path, HEAD + "tests: [{vars: {q: x}, assert: [{type: conversation-relevance, "
                   "config: {windowSize: two}}]}]\n")
    assert "windowSize` must be a whole number" in line


def test_function_call_checks_get_the_functions_of_the_providers_they_run_on(tmp_path: Path) -> None:
    # promptfoo checks is-valid-openai-function-call against the OpenAI provider's config.functions
    # (a list or a file:// file); our target does not send them, the stored warning keeps saying so.
    fns = "- {name: f, parameters: {type: object}}\n"
    suite, warnings = load(tmp_path, """
prompts: ['{{ q }}']
providers:
  - {id: openai:chat:m, label: a, config: {functions: file://fns.yaml}}
  - {id: openai:chat:m, label: b, config: {functions: [{name: g, parameters: {type: object}}]}}
tests:
  - {vars: {q: x}, providers: [a], assert: [{type: is-valid-openai-function-call}]}
  - {vars: {q: y}, providers: [b], assert: [{type: not-is-valid-openai-function-call, transform: output}]}
""", fns__yaml=fns)
    first, second = (c.assertions[0] for c in suite.tests)
    assert first.type == "openai_function_call" and [f["name"] for f in first.config["functions"]] == ["f"]
    assert second.config["assert"]["functions"][0]["name"] == "g" and second.negate is False
    assert any("providers[0].config: functions not applied" in w for w in warnings)
    line = refusal(tmp_path, """
prompts: ['{{ q }}']
providers:
  - {id: openai:chat:m, label: a, config: {functions: [{name: f, parameters: {type: object}}]}}
  - {id: openai:chat:m, label: b, config: {functions: [{name: g, parameters: {type: object}}]}}
tests: [{vars: {q: x}, assert: [{type: is-valid-openai-function-call}]}]
""")
    assert "the test's providers give different `functions`" in line


def test_csv_config_column_sets_an_assertion_threshold(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\ntests: file://t.csv\n",
                    t__csv="q,__expected,__config:__expected:threshold\nx,similar:hello,0.6\ny,similar:hi,\n")
    assert [c.assertions[0].config["threshold"] for c in suite.tests] == [0.6, 0.8]  # an empty cell: the cell's default


def test_tests_prompts_and_providers_filter_what_a_test_runs_on(tmp_path: Path) -> None:
    # docs/configuration/test-cases ("Filtering Tests by Provider") and isPromptAllowed: an exact
    # label or id, `group:*` for names starting `group:`, a bare `group` also matching `group:...`.
    suite, _ = load(tmp_path, """
prompts:
  - {id: factual, label: Factual Assistant, raw: 'F {{ q }}'}
  - {id: 'style:poem', raw: 'P {{ q }}'}
  - {id: 'style:joke', raw: 'J {{ q }}'}
providers:
  - {id: openai:gpt-4o-mini, label: fast-model}
  - {id: openai:gpt-4o, label: smart-model}
  - echo
tests:
  - {vars: {q: a}, prompts: [Factual Assistant], providers: [fast-model]}
  - {vars: {q: b}, prompts: [factual, 'style:*'], providers: ['openai:*']}
  - {vars: {q: c}, prompts: [style], providers: [openai:gpt-4o, echo]}
  - {vars: {q: d}}
""")
    cases = [(c.id, c.input[0].content, c.targets) for c in suite.tests]
    assert cases == [
        ("test-1-p1", "F a", ["fast-model"]),
        ("test-2-p1", "F b", ["fast-model", "smart-model"]),
        ("test-2-p2", "P b", ["fast-model", "smart-model"]),
        ("test-2-p3", "J b", ["fast-model", "smart-model"]),
        ("test-3-p2", "P c", ["smart-model", "echo"]),
        ("test-3-p3", "J c", ["smart-model", "echo"]),
        ("test-4-p1", "F d", None), ("test-4-p2", "P d", None), ("test-4-p3", "J d", None),
    ]


@pytest.mark.parametrize(("field", "needle"), [
    ("prompts: [nope]", "tests[0].prompts: no prompt matches 'nope'"),
    ("providers: [nope]", "tests[0].providers: no provider matches 'nope'"),
    ("providers: nope", "tests[0].providers: invalid provider filter"),
])
def test_a_filter_that_names_nothing_is_one_line(tmp_path: Path, field: str, needle: str) -> None:
    assert needle in refusal(tmp_path, HEAD + f"tests:\n  - vars: {{q: x}}\n    {field}\n")


@pytest.mark.parametrize(("prompts", "needle"), [
    ("['exec:./make-prompt.sh --long']", "prompts[0]: file not found: exec:./make-prompt.sh"),  # run: test_promptfoo_loader_features
])
def test_an_absent_executable_prompt_script_is_one_line(tmp_path: Path, prompts: str, needle: str) -> None:
    assert needle in refusal(tmp_path, f"prompts: {prompts}\nproviders: [echo]\n" + ONE_TEST)


def test_settings_on_echo_leave_a_warning(tmp_path: Path) -> None:
    _, warnings = load(tmp_path, "prompts: ['{{ q }}']\nproviders: [{id: echo, config: {response_format: x}}]\n"
                                 + ONE_TEST)
    assert [w for w in warnings if "providers[0].config: response_format not used (echo answers with its input)" in w]


def test_a_template_cannot_reach_python_objects(tmp_path: Path) -> None:
    # A plain jinja2 environment would hand this template the interpreter's classes (and with
    # them a way to run code in our process); the sandboxed one refuses the attribute.
    marker = tmp_path / "pwned"
    template = ("{{ cycler.__init__.__globals__.os.system('touch " + str(marker) + "') }}"
                "{{ ''.__class__.__mro__[1].__subclasses__() }}")
    line = refusal(tmp_path, f"prompts: [\"{template}\"]\nproviders: [echo]\n" + ONE_TEST)
    assert not marker.exists()  # a plain environment runs the command (checked): the file appears
    assert "does not render" in line and "unsafe" in line


def test_an_x_key_holds_yaml_anchors_and_is_a_stored_warning(tmp_path: Path) -> None:
    # promptfoo's config schema drops unknown keys; an `x-` key (the docker-compose convention,
    # openai-codex-sdk/skill-comparison) only holds an anchor the config uses elsewhere.
    suite, warnings = load(tmp_path, "x-shared: &word banana\n" + HEAD +
                           "tests: [{vars: {q: x}, assert: [{type: contains, value: *word}]}]\n")
    assert suite.tests[0].assertions[0].config["value"] == "banana"
    assert any("x-shared: a YAML extension key" in w for w in warnings)
    # Any other key promptfoo's schema does not have is one it ignores: a stored warning (formats/compat.py).
    _, warnings = load(tmp_path, "y-shared: 1\n" + HEAD + ONE_TEST)
    assert any("y-shared: promptfoo ignores this field too" in w for w in warnings)


def test_a_config_without_tests_runs_each_prompt_once_as_promptfoo_compares_raw_prompts(tmp_path: Path) -> None:
    # src/evaluator.ts: no tests and no scenarios -> one "dummy test" (defaultTest still applies).
    suite, warnings = load(tmp_path, "prompts: ['Tell a joke', 'Tell a {{ kind }} joke']\nproviders: [echo]\n"
                                     "defaultTest: {assert: [{type: icontains, value: joke}]}\n")
    assert [[m.content for m in c.input] for c in suite.tests] == [["Tell a joke"], ["Tell a  joke"]]
    assert all(c.metadata["vars"] == {} and c.assertions[0].type == "icontains" for c in suite.tests)
    assert any("tests: none, so each prompt runs once" in w for w in warnings)
    assert "red-team generation" in refusal(tmp_path, "prompts: ['{{ prompt }}']\nproviders: [echo]\n"
                                                      "redteam: {plugins: [harmful]}\n")


@pytest.mark.parametrize(("body", "where", "instead"), [
    ("tests:\n  - vars: {q: '{{ item }}'}\n    matrix: [{item: [a, b]}]\n", "tests[0].matrix", "a list in `vars`"),
    ("tests:\n  - dataset: file://logs.csv\n", "tests[0].dataset", "`tests: file://data.csv`"),
    ("plugins: [{id: openai-moderation}]\ntests: [{vars: {q: x}}]\n", "plugins", "`redteam.plugins`"),
])
def test_fields_promptfoo_lacks_say_how_promptfoo_spells_them(tmp_path: Path, body: str, where: str,
                                                               instead: str) -> None:
    # promptfoo runs such a config as if the field were not there: accepted with a stored warning
    # that says how promptfoo spells what the config meant.
    _, warnings = load(tmp_path, HEAD + body)
    said = [w for w in warnings if f"{where}: promptfoo ignores this field too" in w]
    assert said and instead in said[0] and "\n" not in said[0]


def test_a_script_provider_given_by_a_python_field_says_how_to_name_it(tmp_path: Path) -> None:
    line = refusal(tmp_path, "prompts: ['{{ q }}']\nproviders:\n  - {id: my-agent, python: agent.py}\n"
                             "tests: [{vars: {q: x}}]\n")
    assert "providers[0].python: unknown field 'python'" in line and "Could not identify provider" in line
    assert "`id: file://path/provider.py`" in line


def test_a_test_naming_a_provider_that_did_not_load_adds_no_second_error(tmp_path: Path) -> None:
    """redteam-sql-injection-agent's shape: the provider's script is absent, and a test names the
    provider by label. The one error is the absent file (a 'no provider matches' line would blame the test)."""
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['{{ q }}']\nproviders:\n  - {id: 'file://agent.py:call_api', label: ticket-agent}\n"
        "tests:\n  - vars: {q: x}\n    providers: [ticket-agent]\n  - vars: {q: y}\n    providers: [nope]\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    lines = str(caught.value).splitlines()
    assert len(lines) == 1 and "provider file not found: agent.py" in lines[0]
