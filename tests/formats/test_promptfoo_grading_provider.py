"""A test's ``options.provider`` (also from ``defaultTest``) is promptfoo's ``grading.provider``:
the grading model of every model-graded assertion without its own ``provider``; a provider by
kind (``{text: ..., embedding: ...}``) gives each type the entry it asks for (src/matchers.ts
``getGradingProvider``: the similarity types ask for ``embedding``, the others for ``text``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect

HEAD = "prompts: ['{{ q }}']\nproviders: [echo]\n"


def load(tmp_path: Path, body: str):
    (tmp_path / "promptfooconfig.yaml").write_text(HEAD + body)
    return load_suite(tmp_path / "promptfooconfig.yaml")


def test_default_test_options_provider_grades_each_model_graded_assertion_by_kind(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
defaultTest:
  options:
    provider:
      text: openai:chat:judge-model
      embedding: openai:embedding:embed-model
tests:
  - vars: {q: hi}
    assert:
      - {type: contains, value: hi}
      - {type: llm-rubric, value: is polite}
      - {type: similar, value: hello, threshold: 0.5}
      - {type: llm-rubric, value: is short, provider: openai:chat:own-model}
""")
    contains, rubric, similar, own = suite.tests[0].assertions
    assert contains.type == "contains"  # not model-graded: promptfoo's grading.provider is not read
    assert rubric.type == "with_provider" and rubric.config["provider"]["ref"] == "openai:chat:judge-model"
    assert rubric.config["provider"]["openai"]["model"] == "judge-model"
    assert "embedding_model" not in rubric.config["provider"]
    assert similar.type == "with_provider" and similar.config["provider"]["embedding_model"] == "embed-model"
    assert own.config["provider"]["ref"] == "openai:chat:own-model"  # an assertion's own provider wins


def test_a_kind_the_provider_lacks_errs_that_assertion_as_promptfoo_does(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """litellm/promptfooconfig.yaml's shape: only an `embedding` entry, and an llm-rubric among its
    assertions. promptfoo's getGradingProvider throws for the rubric ("Invalid provider definition for
    output type 'text'"), failing that assertion while the rest run: the same here, with a warning."""
    monkeypatch.setenv("LITELLM_API_BASE", fake_openai.base_url)
    (tmp_path / "promptfooconfig.yaml").write_text(HEAD + """
defaultTest:
  options:
    provider: {embedding: litellm:embedding:text-embedding-3-small}
tests:
  - vars: {q: hello there}
    assert:
      - {type: similar, value: hello there, threshold: 0.99}
      - {type: llm-rubric, value: is polite}
""")
    suite, warnings = load_suite(tmp_path / "promptfooconfig.yaml")
    assert any("defaultTest.options.provider: the grading provider has no `text` entry, which llm-rubric needs"
               in w for w in warnings)
    monkeypatch.chdir(tmp_path)
    main(["run", "promptfooconfig.yaml", "--db", str(tmp_path / "r.duckdb")])
    capsys.readouterr()
    with connect(tmp_path / "r.duckdb") as con:
        grades = con.execute("SELECT assertion_index, passed, status, reason FROM grades "
                             "ORDER BY assertion_index").fetchall()
    assert grades[0][:3] == (0, True, "graded")  # graded on the embedding entry (the fake server)
    assert grades[1][:3] == (1, False, "error")
    assert "Invalid provider definition for output type 'text'" in grades[1][3]
    assert fake_openai.paths == ["/v1/embeddings"]  # no chat request: no judge was called for the rubric


def test_answer_relevance_takes_text_and_embedding_from_one_server(tmp_path: Path) -> None:
    suite, _ = load(tmp_path, """
tests:
  - vars: {q: hi}
    options:
      provider: {text: openai:chat:judge-model, embedding: openai:embedding:embed-model}
    assert: [{type: answer-relevance, threshold: 0.5}]
""")
    provider = suite.tests[0].assertions[0].config["provider"]
    assert provider["openai"]["model"] == "judge-model" and provider["embedding_model"] == "embed-model"
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, """
tests:
  - vars: {q: hi}
    options:
      provider:
        text: openai:chat:judge-model
        embedding: {id: openai:embedding:e, config: {apiBaseUrl: "http://elsewhere:9/v1"}}
    assert: [{type: answer-relevance, threshold: 0.5}]
""")
    assert "tests[0].options.provider" in str(caught.value) and "different servers" in str(caught.value)


def test_options_provider_grades_end_to_end_on_the_models_it_names(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GRADER_KEY", "sk-grader")
    fake_openai.script = ['{"reason": "It greets.", "pass": true, "score": 1}']  # the one chat request: the judge
    server = "{apiBaseUrl: '" + fake_openai.base_url + "', apiKeyEnvar: GRADER_KEY}"
    (tmp_path / "promptfooconfig.yaml").write_text(HEAD + f"""
defaultTest:
  options:
    provider:
      text: {{id: 'openai:chat:grader-model', config: {server}}}
      embedding: {{id: 'openai:embedding:embed-model', config: {server}}}
tests:
  - vars: {{q: hello there}}
    assert:
      - {{type: llm-rubric, value: greets the reader}}
      - {{type: similar, value: hello there, threshold: 0.99}}
""")
    monkeypatch.chdir(tmp_path)
    code = main(["run", "promptfooconfig.yaml", "--db", str(tmp_path / "r.duckdb")])
    assert code == ExitCode.OK, capsys.readouterr()
    with connect(tmp_path / "r.duckdb") as con:
        grades = con.execute("SELECT assertion_index, passed, status FROM grades ORDER BY assertion_index").fetchall()
    assert grades == [(0, True, "graded"), (1, True, "graded")]  # echo answers with the text itself: cosine 1
    assert sorted((p, b.get("model")) for p, b in zip(fake_openai.paths, fake_openai.requests)) == [
        ("/v1/chat/completions", "grader-model"), ("/v1/embeddings", "embed-model")]


def _run_default_graded(tmp_path: Path, fake_openai, capsys) -> list[tuple]:  # noqa: ANN001
    fake_openai.script = ['{"reason": "It greets.", "pass": true, "score": 1}']  # the one chat request: the judge
    (tmp_path / "promptfooconfig.yaml").write_text(HEAD + """
tests:
  - vars: {q: hello there}
    assert:
      - {type: llm-rubric, value: greets the reader}
      - {type: similar, value: hello there, threshold: 0.99}
""")
    code = main(["run", str(tmp_path / "promptfooconfig.yaml"), "--db", str(tmp_path / "r.duckdb")])
    capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED)
    with connect(tmp_path / "r.duckdb") as con:
        return con.execute("SELECT assertion_index, passed, status, reason, details FROM grades "
                           "ORDER BY assertion_index").fetchall()


def test_without_a_judge_target_promptfoo_configs_grade_with_promptfoos_default_grader(
        tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        capsys: pytest.CaptureFixture[str]) -> None:
    """promptfoo grades with its default providers (src/providers/openai/defaults.ts): the chat
    model gpt-5.5-2026-04-23 and the embedding model text-embedding-3-large, at OpenAI's address
    (here OPENAI_BASE_URL, the fake server)."""
    monkeypatch.chdir(tmp_path)  # no targets.yaml here: no `judge` or `default` target
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    grades = _run_default_graded(tmp_path, fake_openai, capsys)
    assert [g[:3] for g in grades] == [(0, True, "graded"), (1, True, "graded")]
    assert sorted((p, b.get("model")) for p, b in zip(fake_openai.paths, fake_openai.requests)) == [
        ("/v1/chat/completions", "gpt-5.5-2026-04-23"), ("/v1/embeddings", "text-embedding-3-large")]


def test_without_openai_settings_the_default_grader_is_no_judge(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    grades = _run_default_graded(tmp_path, fake_openai, capsys)
    assert grades[0][:3] == (0, False, "error") and "OPENAI_API_KEY or OPENAI_BASE_URL" in grades[0][3]
    assert grades[1][:3] == (1, True, "graded") and '"embeddings": "local"' in grades[1][4]  # offline, as before
    assert fake_openai.request_count == 0  # never a call to OpenAI without settings


def test_a_judge_target_of_the_project_wins_over_promptfoos_default(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    (tmp_path / "targets.yaml").write_text(
        f"targets:\n  - {{name: judge, type: openai, model: our-judge, base_url: '{fake_openai.base_url}'}}\n")
    grades = _run_default_graded(tmp_path, fake_openai, capsys)
    assert grades[0][:3] == (0, True, "graded")
    assert ("/v1/chat/completions", "our-judge") in [(p, b.get("model")) for p, b in
                                                      zip(fake_openai.paths, fake_openai.requests)]
