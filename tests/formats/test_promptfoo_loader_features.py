"""promptfoo config features read by the loader: custom Nunjucks filters, provider `prompts`,
a prompt's own `config`, `env`, `tracing`, `redteam` next to tests.

Expected values follow promptfoo's source: src/util/config/load.ts and src/util/index.ts
(readFilters), src/evaluatorHelpers.ts (renderPrompt with the filters), src/prompts/index.ts
(readProviderPromptMap) and src/evaluator.ts (isAllowedPrompt, prompt.config merged over the
provider's config)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect

CORPUS = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"


def one_line_error(config: Path) -> str:
    with pytest.raises(SpecErrors) as caught:
        load_suite(config)
    text = str(caught.value)
    assert text and "Traceback" not in text
    return text.splitlines()[0]


# ---- custom Nunjucks filters (nunjucksFilters, filters) --------------------------------------

def test_the_real_allcaps_filter_runs_and_its_effect_is_stored(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "skill"
    shutil.copytree(CORPUS / "nunjucks-custom-filters", folder)
    config = folder / "promptfooconfig.yaml"
    # the example as promptfoo's own later version writes it (nunjucksFilters), run on `echo`
    config.write_text(config.read_text().replace("filters:", "nunjucksFilters:")
                      .replace("openai:gpt-3.5-turbo", "echo"))
    db = tmp_path / "r.duckdb"
    code = main(["run", str(config), "--db", str(db)])
    out = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), out
    with connect(db) as con:
        stored = sorted(r[0] for r in con.execute("SELECT input FROM test_cases").fetchall())
        outputs = sorted(r[0] for r in con.execute("SELECT output FROM model_outputs").fetchall())
    assert stored == sorted(["Rephrase this in French: HELLO WORLD",
                             "Translate this to conversational French: HELLO WORLD",
                             "Rephrase this in French: I'M HUNGRY",
                             "Translate this to conversational French: I'M HUNGRY"])
    assert outputs == stored  # echo sent back what the filter made


def test_the_old_filters_name_is_read_with_a_warning() -> None:
    suite, warnings = load_suite(CORPUS / "nunjucks-custom-filters" / "promptfooconfig.yaml")
    assert [m.content for m in suite.tests[0].input] == ["Rephrase this in French: HELLO WORLD"]
    assert any("filters: read as `nunjucksFilters`" in w for w in warnings)


def test_filter_arguments_globs_and_values_other_than_text(tmp_path: Path) -> None:
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "wrap.mjs").write_text("export default (s, l, r) => `${l}${s}${r}`;\n")
    (tmp_path / "count.js").write_text("module.exports = (o) => Object.keys(o).length;\n")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['{{ q | wrap(\"<\", \">\") }} has {{ items | count }} items']\n"
                      "providers: [echo]\nnunjucksFilters: {wrap: 'f/*.mjs', count: ./count.js}\n"
                      "tests: [{vars: {q: hi, items: {a: 1, b: 2, c: 3}}}]\n")
    suite, _ = load_suite(config)
    assert [m.content for m in suite.tests[0].input] == ["<hi> has 3 items"]


@pytest.mark.parametrize(("filters", "files", "expected"), [
    ("{up: ./up.py}", {"up.py": "def up(s): return s\n"}, "nunjucksFilters.up: filter file up.py is not JavaScript"),
    ("{up: ./absent.js}", {}, "nunjucksFilters.up: filter file not found: ./absent.js"),
    ("{up: ./up.js}", {"up.js": "module.exports = (s) => { throw new Error('no caps today'); };\n"},
     "no caps today"),
    ("[up.js]", {}, "nunjucksFilters: got list"),
])
def test_bad_filters_are_one_line_errors(tmp_path: Path, filters: str, files: dict[str, str],
                                         expected: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: ['{{{{ q | up }}}}']\nproviders: [echo]\nnunjucksFilters: {filters}\n"
                      "tests: [{vars: {q: hi}}]\n")
    line = one_line_error(config)
    assert expected in line and "promptfooconfig.yaml" in line


# ---- a provider's `prompts` (promptfoo's providerPromptMap / isAllowedPrompt) -----------------

def test_a_provider_runs_only_the_prompts_it_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # config-prompts-per-model's shape, with inline prompts and `echo` providers
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts:\n  - {raw: 'First about {{ topic }}', label: My first prompt}\n"
                      "  - {raw: 'Second about {{ topic }}', label: My second prompt}\n"
                      "providers:\n  - {id: echo, label: small, prompts: [My first prompt, My second prompt]}\n"
                      "  - {id: echo, label: big, prompts: [My first prompt]}\n"
                      "tests: [{vars: {topic: bananas}}, {vars: {topic: space}}]\n")
    db = tmp_path / "r.duckdb"
    code = main(["run", str(config), "--db", str(db)])
    out = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), out
    with connect(db) as con:
        pairs = sorted(con.execute("SELECT target, output FROM model_outputs").fetchall())
    assert pairs == [("big", "First about bananas"), ("big", "First about space"),
                     ("small", "First about bananas"), ("small", "First about space"),
                     ("small", "Second about bananas"), ("small", "Second about space")]


def test_provider_prompts_match_a_label_or_its_group_and_must_name_a_prompt(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    head = ("prompts:\n  - {raw: 'a {{ q }}', label: 'group:one'}\n  - {raw: 'b {{ q }}', label: other}\n"
            "tests: [{vars: {q: x}}]\n")
    config.write_text(head + "providers: [{id: echo, label: e, prompts: [group]}, {id: echo, label: all}]\n")
    suite, _ = load_suite(config)
    assert [(c.metadata["prompt"], c.targets) for c in suite.tests] == [("group:one", None), ("other", ["all"])]
    config.write_text(head + "providers: [{id: echo, prompts: [absent]}]\n")
    assert "providers[0].prompts: no prompt matches 'absent'" in one_line_error(config)
    config.write_text(head + "providers: [{id: echo, prompts: other}]\n")
    assert "providers[0].prompts: got str" in one_line_error(config)


# ---- a prompt's own `config` (promptfoo merges {...provider.config, ...prompt.config}) -------

SENTIMENT_SCHEMA = ("{type: json_schema, json_schema: {name: MovieReviewSentiment, schema: {type: object, "
                    "properties: {sentiment: {type: string, enum: [positive, negative]}}, required: [sentiment]}}}")


def test_a_prompt_config_is_sent_and_its_json_answer_reaches_javascript_parsed(
        tmp_path: Path, fake_openai, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    fake_openai.responder = lambda body: '{"sentiment": "positive", "confidence": 8}'
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts:\n"
        f"  - {{label: structured, raw: 'Classify: {{{{ text }}}}', config: {{temperature: 0.3, "
        f"response_format: {SENTIMENT_SCHEMA}}}}}\n"
        "  - {label: plain, raw: 'Say: {{ text }}'}\n"
        "providers:\n"
        f"  - {{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{fake_openai.base_url}', "
        "apiKeyEnvar: FAKE_KEY, temperature: 0.9, max_tokens: 50}}\n"
        "defaultTest:\n  assert:\n    - type: is-json\n"
        "    - {type: javascript, value: 'output.sentiment === context.vars.sentiment'}\n"
        "tests: [{vars: {text: a fine film, sentiment: positive}}]\n")
    db = tmp_path / "r.duckdb"
    code = main(["run", str(config), "--db", str(db)])
    out = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), out
    bodies = {b["messages"][-1]["content"]: b for b in fake_openai.requests if b and "messages" in b}
    structured, plain = bodies["Classify: a fine film"], bodies["Say: a fine film"]
    # the prompt's config wins over the provider's; what it does not set stays the provider's
    assert structured["temperature"] == 0.3 and structured["max_tokens"] == 50
    assert structured["response_format"]["json_schema"]["name"] == "MovieReviewSentiment"
    assert plain["temperature"] == 0.9 and "response_format" not in plain
    with connect(db) as con:
        rows = dict(con.execute("SELECT t.metadata->>'$.prompt', g.passed FROM grades g JOIN test_cases t "
                                "USING (test_id) WHERE g.assertion_type = 'javascript'").fetchall())
        stored = con.execute("SELECT metadata->'$.prompt_config.temperature' FROM test_cases "
                             "WHERE metadata->>'$.prompt' = 'structured'").fetchone()[0]
    # promptfoo's OpenAI provider parses a json_schema answer: `output.sentiment` is read;
    # without response_format the output stays text and `output.sentiment` is undefined
    assert rows == {"structured": True, "plain": False}
    assert float(stored) == 0.3


def test_prompt_config_keys_not_sent_and_non_openai_targets_are_stored_warnings(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: [{raw: 'x {{ q }}', label: p, config: {top_p: 0.5, max_tokens: 9}}]\n"
                      "providers: [echo]\ntests: [{vars: {q: 1}}]\n")
    suite, warnings = load_suite(config)
    assert suite.tests[0].model_settings is not None and suite.tests[0].model_settings.max_tokens == 9
    assert any("config: top_p not applied" in w for w in warnings)
    assert any("applies to OpenAI-compatible targets only; not to echo" in w for w in warnings)
    config.write_text("prompts: [{raw: 'x', label: p, config: [1]}]\nproviders: [echo]\ntests: [{vars: {}}]\n")
    assert "prompts[0].config: got list" in one_line_error(config)


# ---- env: references to the environment and base URLs; no secrets from files -----------------

def test_env_base_url_and_key_reference_reach_the_openai_target(
        tmp_path: Path, fake_openai, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_pipelines.run.targets.config import OpenAITargetConfig, resolve_connection

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("MY_FAKE_KEY", "sk-from-my-var")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"env:\n  OPENAI_BASE_URL: '{fake_openai.base_url}'\n  OPENAI_API_KEY: '{{{{ env.MY_FAKE_KEY }}}}'\n"
                      "prompts: ['Say {{ q }}']\nproviders: ['openai:chat:fake-model']\n"
                      "tests: [{vars: {q: hello}, assert: [{type: contains, value: hello}]}]\n")
    suite, _ = load_suite(config)
    target = OpenAITargetConfig.model_validate(suite.target_configs[0])
    assert resolve_connection(target, {"MY_FAKE_KEY": "k", "OPENAI_API_KEY": "other"}) == ("k", fake_openai.base_url)
    db = tmp_path / "r.duckdb"
    code = main(["run", str(config), "--db", str(db)])
    out = capsys.readouterr()
    assert code == ExitCode.OK, out
    assert [b["messages"][-1]["content"] for b in fake_openai.requests if b] == ["Say hello"]
    with connect(db) as con:
        spec = con.execute("SELECT spec::VARCHAR FROM suites").fetchone()[0]
    assert "sk-from-my-var" not in spec and "MY_FAKE_KEY" in spec  # the variable's name, never its value


@pytest.mark.parametrize(("env", "expected"), [
    ("{OPENAI_API_KEY: sk-literal}", "env.OPENAI_API_KEY: a literal value for OPENAI_API_KEY (a secret) is not accepted"),
    ("{MY_TOKEN: abc}", "env.MY_TOKEN: a literal value for MY_TOKEN (a secret)"),
    ("{PROMPTFOO_CACHE_PATH: /tmp/x}", "env.PROMPTFOO_CACHE_PATH: setting PROMPTFOO_CACHE_PATH from the config is not supported"),
    ("{ANTHROPIC_API_KEY: $OTHER}", "env.ANTHROPIC_API_KEY: setting ANTHROPIC_API_KEY from the config is not supported"),
])
def test_env_entries_without_effect_or_with_secrets_are_one_line(tmp_path: Path, env: str, expected: str) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"env: {env}\nprompts: ['{{{{ q }}}}']\nproviders: ['openai:gpt-4o-mini']\n"
                      "tests: [{vars: {q: x}}]\n")
    line = one_line_error(config)
    assert expected in line
    assert "sk-literal" not in line


def test_env_self_reference_is_a_stored_warning() -> None:
    # openai-assistant's `OPENAI_API_KEY: $OPENAI_API_KEY`
    from eval_pipelines.formats.eval_yaml.fields import LoadContext
    from eval_pipelines.formats.promptfoo.env import apply_env, reference
    from eval_pipelines.suite.paths import PathPolicy
    from eval_pipelines.suite.source import load_document

    assert [reference(v) for v in ("$A", "${B_1}", "{{ env.C }}", "x$A", "$A b")] == ["A", "B_1", "C", None, None]
    doc = load_document(CORPUS / "openai-assistant" / "promptfooconfig.yaml")
    ctx = LoadContext(PathPolicy())
    apply_env(ctx, doc, doc.data["env"], [])
    assert not ctx.errors
    assert any("env.OPENAI_API_KEY: refers to itself; no effect" in w for w in ctx.warnings)


# ---- tracing and redteam: accepted with a stored warning when the tests do not depend on them ---

HEAD = "prompts: ['{{ q }}']\nproviders: [echo]\n"


def test_tracing_traces_outputs_and_redteam_next_to_tests_is_a_stored_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(HEAD + "tracing: {enabled: true, otlp: {http: {enabled: true, port: 4318}}}\n"
                      "redteam: {purpose: a bank, plugins: [pii], numTests: 4}\n"
                      "tests: [{vars: {q: hello}, assert: [{type: contains, value: hello}]}]\n")
    db = tmp_path / "r.duckdb"
    code = main(["run", str(config), "--db", str(db)])
    out = capsys.readouterr()
    assert code == ExitCode.OK, out
    with connect(db) as con:
        warnings = con.execute("SELECT warnings::VARCHAR FROM suites").fetchone()[0]
        cases = con.execute("SELECT count(*) FROM test_cases").fetchone()[0]
        traced = con.execute("SELECT trace_id, spans FROM model_outputs").fetchall()
    assert "redteam: not used" in warnings and ": tracing" not in warnings
    assert cases == 1  # the config's own test; redteam generated none
    # tracing: the output has its trace (echo exports no span: an empty list, not NULL)
    assert len(traced) == 1 and len(traced[0][0]) == 32 and traced[0][1] == "[]"


@pytest.mark.parametrize(("extra", "expected"), [
    ("redteam: {plugins: [pii]}\ntests: []\n", "redteam: red-team generation (`redteam`) without tests is not supported"),
])
def test_redteam_without_tests_is_one_line(tmp_path: Path, extra: str, expected: str) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(HEAD + extra)
    assert expected in one_line_error(config)


# ---- exec: prompts (src/prompts/processors/executable.ts), run in the sandbox ------------------

GEN_PY = """\
import json, os, sys
context = json.loads(sys.argv[-1])
print("\\x1b[1mHello " + context["vars"]["name"] + "\\x1b[0m via " + context["provider"]["id"]
      + " key=" + os.environ.get("SECRET_TOKEN", "none") + " {{ task }}  ")
"""


def test_executable_prompts_print_the_prompt_in_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "s3cret")
    (tmp_path / "gen.py").write_text(GEN_PY)
    (tmp_path / "gen.sh").write_text('#!/bin/sh\necho "args: $# first=$1"\n')
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts:\n  - {label: py, raw: 'exec:python3 gen.py'}\n  - 'exec:./gen.sh --flag'\n"
                      "providers: [echo]\ntests: [{vars: {name: Alice, task: explain recursion}}]\n")
    suite, _ = load_suite(config)
    # stdout without ANSI escapes, trimmed, then rendered as a template; the context is the last argument
    assert [c.input[0].content for c in suite.tests] == ["Hello Alice via echo key=none explain recursion",
                                                         "args: 2 first=--flag"]


@pytest.mark.parametrize(("prompt", "files", "expected"), [
    ("exec:./absent.sh", {}, "prompts[0]: file not found: exec:./absent.sh"),
    ("exec:echo hi", {}, "names no file beside the config"),
    ("exec:./fail.sh", {"fail.sh": "#!/bin/sh\necho 'no prompt today' >&2\nexit 3\n"},
     "exec:./fail.sh failed in the sandbox: exited with 3: no prompt today"),
    ("exec:./quiet.sh", {"quiet.sh": "#!/bin/sh\necho 'only a warning' >&2\n"},
     "exec:./quiet.sh printed no prompt: only a warning"),
])
def test_failing_executable_prompts_are_one_line(tmp_path: Path, prompt: str, files: dict[str, str],
                                                 expected: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: ['{prompt}']\nproviders: [echo]\ntests: [{{vars: {{q: x}}}}]\n")
    assert expected in one_line_error(config)


def test_the_response_cache_tells_prompt_settings_apart() -> None:
    from eval_pipelines.run.cache import request_hash
    from eval_pipelines.run.targets.base import TargetRequest
    from eval_pipelines.run.targets.config import OpenAITargetConfig
    from eval_pipelines.suite.models import Message

    target = OpenAITargetConfig(name="t", model="m")
    def request(settings):  # noqa: ANN001, ANN202
        return TargetRequest(test_id="a", trial=1, system_prompt=None, messages=[Message(role="user", content="x")],
                             timeout_s=5, model_settings=settings)
    plain, structured = request(None), request({"response_format": {"type": "json_schema"}})
    assert request_hash(target, None, plain) != request_hash(target, None, structured)
    assert request_hash(target, None, plain) == request_hash(target, None, request({}))


def test_a_provider_response_format_is_sent_and_parsed_for_javascript(
        tmp_path: Path, fake_openai, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    # examples/openai-structured-output's shape: response_format on the provider
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    fake_openai.responder = lambda body: '{"category": "billing"}'
    (tmp_path / "format.json").write_text('{"type": "json_object"}')
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['Analyze: {{ query }}']\nproviders:\n"
        f"  - {{id: 'openai:chat:fake-model', label: schema, config: {{apiBaseUrl: '{fake_openai.base_url}', "
        f"apiKeyEnvar: FAKE_KEY, response_format: {SENTIMENT_SCHEMA}}}}}\n"
        "tests: [{vars: {query: refund me}, assert: [{type: javascript, value: \"output.category === 'billing'\"}]}]\n")
    db = tmp_path / "r.duckdb"
    code = main(["run", str(config), "--db", str(db)])
    out = capsys.readouterr()
    assert code == ExitCode.OK, out
    sent = [b for b in fake_openai.requests if b]
    assert [b["response_format"]["json_schema"]["name"] for b in sent] == ["MovieReviewSentiment"]
    with connect(db) as con:
        assert con.execute("SELECT passed FROM grades").fetchall() == [(True,)]
    # a file:// response_format is read; a second provider without json_schema: text, with a warning
    config.write_text(config.read_text().replace(
        "  - {id: 'openai:chat:fake-model', label: schema",
        "  - {id: 'openai:chat:fake-model', label: plain, config: {response_format: file://format.json}}\n"
        "  - {id: 'openai:chat:fake-model', label: schema"))
    suite, warnings = load_suite(config)
    assert suite.target_configs[0]["response_format"] == {"type": "json_object"}
    assert not suite.tests[0].assertions[0].config.get("output_json")
    assert any("response_format json_schema on schema only" in w for w in warnings)


def test_response_format_files_and_their_nested_schema_files_are_read() -> None:
    # examples/openai-responses: response_format: file://nested_response_format.json, whose
    # `schema` is file://event_schema.json (promptfoo's maybeLoadResponseFormatFromExternalFile)
    suite, _ = load_suite(CORPUS / "openai-responses" / "promptfooconfig.external-format.yaml")
    formats = {c["name"]: c.get("response_format") for c in suite.target_configs}
    nested = [f for f in formats.values() if f and f.get("name") == "event_extraction" and "description"
              in f["schema"].get("required", [])]
    assert nested and nested[0]["schema"]["properties"]["participants"]["type"] == "array"
    assert all(f and f["type"] == "json_schema" for f in formats.values())


def test_an_api_key_templated_from_the_environment_is_read_there_at_call_time(
        tmp_path: Path, fake_openai, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    # provider-thegrid's form: promptfoo renders config.apiKey, so `{{ env.NAME | default(...) }}` reads NAME.
    monkeypatch.setenv("GRID_TEST_KEY", "sk-grid-from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-be-sent")
    # The suite chose the address: its key goes there once the operator trusts the host (key_policy.py).
    monkeypatch.setenv("EVAL_PIPELINES_TRUSTED_HOSTS", "127.0.0.1")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['Say {{ q }}']\nproviders:\n"
        f"  - {{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{fake_openai.base_url}', "
        "apiKey: '{{ env.GRID_TEST_KEY | default(\"NOT_SET\", true) }}'}}\ntests: [{vars: {q: hi}}]\n")
    suite, _ = load_suite(config)
    assert suite.target_configs[0]["api_key_env"] == "GRID_TEST_KEY"
    db = tmp_path / "r.duckdb"
    assert main(["run", str(config), "--db", str(db)]) in (ExitCode.OK, ExitCode.GATE_FAILED), capsys.readouterr()
    assert [h.get("authorization") for h in fake_openai.headers] == ["Bearer sk-grid-from-env"]
    with connect(db) as con:  # the key itself is stored nowhere
        assert not con.execute("SELECT count(*) FROM suites WHERE CAST(spec AS VARCHAR) LIKE '%sk-grid%'").fetchone()[0]


@pytest.mark.parametrize(("key", "needle"), [
    ("sk-123", "a literal API key is not accepted"),
    ("'{{ env.A_KEY }}', apiKeyEnvar: B_KEY", "`apiKey` and `apiKeyEnvar` name different variables"),
])
def test_an_api_key_not_from_the_environment_is_one_line(tmp_path: Path, key: str, needle: str) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: ['x']\nproviders: [{{id: 'openai:chat:m', config: {{apiKey: {key}}}}}]\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(config)
    assert needle in str(caught.value).splitlines()[0]
