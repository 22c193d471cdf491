"""promptfoo grading features on real example configs, graded over real HTTP by the fake judge:
g-eval with a list of criteria (src/assertions/geval.ts), select-best and max-score
(src/matchers.ts matchesSelectBest, src/assertions/maxScore.ts), per-assertion `provider`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import agrade_output
from eval_pipelines.grading.judge import OpenAIJudge
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.formats.loader import load_suite
from tests.support.fake_openai import FakeOpenAIServer, last_user_message

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"


def _judge(server: FakeOpenAIServer) -> OpenAIJudge:
    return OpenAIJudge(OpenAITargetConfig(name="judge", model="judge-model", max_retries=0),
                       api_key="sk-test", base_url=server.base_url)


def _grade(server: FakeOpenAIServer, case: Any, output: str, index: int = 0):
    async def go():
        judge = _judge(server)
        try:
            return await agrade_output(case.assertions[index], GradeInput(case=case, output=output, judge=judge),
                                       index)
        finally:
            await judge.aclose()
    return asyncio.run(go())


# ---- g-eval with a list of criteria ------------------------------------------------------

GEVAL_NAMES = ("Coherence", "Consistency", "Fluency", "Relevance")


@pytest.mark.parametrize(("scores", "passed"), [
    ((0.9, 0.5, 0.8, 0.6), True),   # mean 0.7: promptfoo passes at mean >= threshold (0.7 by default)
    ((0.9, 0.5, 0.8, 0.5), False),  # mean 0.675
])
def test_g_eval_list_judges_each_criterion_and_compares_the_mean(scores: tuple[float, ...], passed: bool) -> None:
    suite, _ = load_suite(EXAMPLES / "eval-g-eval" / "promptfooconfig.yaml")
    case = suite.tests[4]  # the example's list of four criteria
    by_name = dict(zip(GEVAL_NAMES, scores))

    def responder(body: dict[str, Any]) -> str:
        asked = [n for n in GEVAL_NAMES if f"{n} - " in last_user_message(body)]
        assert len(asked) == 1, "each call judges exactly one criterion"
        return json.dumps({"score": by_name[asked[0]], "reasoning": f"{asked[0]} judged"})

    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = responder
        grade = _grade(server, case, "I am fine, thank you!")
        assert server.request_count == 4
    assert grade.passed is passed
    assert grade.details["raw_score"] == pytest.approx(sum(scores) / 4)
    assert [c["score"] for c in grade.details["criteria_scores"]] == list(scores)
    assert grade.details["threshold"] == 0.7
    assert "Coherence judged\n\nConsistency judged" in grade.details["feedback"]


def test_g_eval_single_criterion_is_one_judgment() -> None:
    suite, _ = load_suite(EXAMPLES / "eval-g-eval" / "promptfooconfig.yaml")
    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = lambda body: json.dumps({"score": 0.65, "reasoning": "ok"})
        grade = _grade(server, suite.tests[0], "I am fine.")
        assert server.request_count == 1
    assert not grade.passed and grade.details["raw_score"] == pytest.approx(0.65)


# ---- select-best and max-score: all outputs of a test graded together -----------------------

def _run_config(tmp_path: Path, config: Path | str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str]) -> Path:
    """``eval-pipelines run`` on a promptfoo config: its OpenAI providers and the `judge` target
    talk to the fake server. Returns the DuckDB file."""
    from eval_pipelines.cli import main

    folder = tmp_path / "suite"
    folder.mkdir(exist_ok=True)
    text = config.read_text() if isinstance(config, Path) else config
    (folder / "promptfooconfig.yaml").write_text(text)
    (folder / "targets.yaml").write_text(
        f"targets:\n  - name: judge\n    type: openai\n    model: judge-model\n    base_url: {server.base_url}\n"
        "    api_key_env: OPENAI_API_KEY\n    max_retries: 0\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    main(["--root", str(tmp_path), "run", str(folder / "promptfooconfig.yaml"), "--db", str(db)])
    out = capsys.readouterr()
    assert db.exists(), out
    return db


def _grades(db: Path, type_: str) -> dict[str, tuple[float, bool, str, dict]]:
    from eval_pipelines.store.connection import connect

    with connect(db) as con:
        rows = con.execute("SELECT test_id, score, passed, status, details FROM grades WHERE assertion_type = ? "
                           "ORDER BY test_id", [type_]).fetchall()
    return {r[0]: (r[1], r[2], r[3], json.loads(r[4]) if isinstance(r[4], str) else r[4]) for r in rows}


def test_select_best_on_the_real_example_picks_one_output_per_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    tweets = {"Write a tweet about bananas": "Bananas: nature's snack.",
              "Write a very concise, funny tweet about bananas": "I find bananas a-peeling.",
              "Write a tweet about nyc": "NYC has 8 million people and 5 boroughs.",
              "Write a very concise, funny tweet about nyc": "NYC: pizza."}
    judged: list[str] = []

    def responder(body: dict[str, Any]) -> str:
        text = last_user_message(body)
        if body["model"] != "judge-model":
            return tweets[text]
        judged.append(text)
        # promptfoo's rule: the judge's index picks the winner; 1 (the pun) for the funniest, 0 for facts
        return json.dumps({"index": 1 if "funniest" in text else 0, "reasoning": "picked"})

    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = responder
        db = _run_config(tmp_path, EXAMPLES / "eval-select-best" / "promptfooconfig.yaml", server, monkeypatch,
                         capsys)
    assert len(judged) == 2  # one judge call per test, with both prompts' outputs
    assert all('<Text index="0">' in t and '<Text index="1">' in t for t in judged)
    assert "I find bananas a-peeling." in next(t for t in judged if "funniest" in t)
    grades = _grades(db, "select_best")
    assert {k: (v[0], v[1]) for k, v in grades.items()} == {
        "test-1-p1": (0.0, False), "test-1-p2": (1.0, True), "test-2-p1": (1.0, True), "test-2-p2": (0.0, False)}
    details = grades["test-1-p1"][3]
    assert details["choice"] == 1 and details["position"] == 0 and details["judge_reasoning"] == "picked"
    assert [o["test_id"] for o in details["outputs"]] == ["test-1-p1", "test-1-p2"]
    from eval_pipelines.store.connection import connect

    with connect(db) as con:  # the unchosen output fails its test, as in promptfoo
        verdicts = dict(con.execute("SELECT test_id, verdict FROM test_results").fetchall())
    assert verdicts == {"test-1-p1": "fail", "test-1-p2": "pass", "test-2-p1": "pass", "test-2-p2": "fail"}


MAX_SCORE_CONFIG = """\
prompts:
  - 'Name a fruit ({{n}})'
  - 'Name a red fruit ({{n}})'
  - 'Name a yellow fruit ({{n}})'
providers:
  - openai:chat:fake-model
tests:
  - vars: {n: one}
    assert:
      - type: contains
        value: apple
      - type: contains
        value: red
      - type: max-score
  - vars: {n: two}
    assert:
      - type: contains
        value: apple
      - type: max-score
        value: {method: sum, threshold: 1.5}
"""


def test_max_score_selects_the_output_whose_other_assertions_score_highest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    answers = {"Name a fruit (one)": "an apple", "Name a red fruit (one)": "a red apple",
               "Name a yellow fruit (one)": "a red apple too",
               "Name a fruit (two)": "an apple", "Name a red fruit (two)": "a cherry",
               "Name a yellow fruit (two)": "a banana"}
    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = lambda body: answers[last_user_message(body)]
        db = _run_config(tmp_path, MAX_SCORE_CONFIG, server, monkeypatch, capsys)
        assert server.request_count == 6  # no judge: max-score reads the other grades
    grades = _grades(db, "max_score")
    # test 1: averages 0.5, 1, 1: the first of the tied best (p2) wins (promptfoo's tie rule)
    assert {k: v[:2] for k, v in grades.items() if k.startswith("test-1")} == {
        "test-1-p1": (0.0, False), "test-1-p2": (1.0, True), "test-1-p3": (0.0, False)}
    assert [grades[f"test-1-p{i}"][3]["aggregate"] for i in (1, 2, 3)] == [0.5, 1.0, 1.0]
    # test 2: sums 1, 0, 0; the best (1) is below the threshold 1.5: nobody is selected
    assert {k: v[:2] for k, v in grades.items() if k.startswith("test-2")} == {
        "test-2-p1": (0.0, False), "test-2-p2": (0.0, False), "test-2-p3": (0.0, False)}


MAX_SCORE_WEIGHTS = """\
prompts: ['A ({{n}})', 'B ({{n}})']
providers: [openai:chat:fake-model]
defaultTest:
  assert: [{type: icontains, value: fresh}]
tests:
  - vars: {n: w}
    assert:
      - {type: contains, value: apple}
      - {type: not-contains, value: rotten}
      - type: max-score
        value: {weights: {contains: 3, not-contains: 0.5}}
"""


def test_max_score_weights_apply_to_every_assertion_of_a_type_as_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # promptfoo's docs (max-score "How weights work"): average = sum(score x weight) / sum(weights),
    # weight 1 for a type not named; the defaultTest assertion (icontains) counts with weight 1.
    answers = {"A (w)": "an apple, rotten", "B (w)": "a FRESH pear"}
    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = lambda body: answers[last_user_message(body)]
        db = _run_config(tmp_path, MAX_SCORE_WEIGHTS, server, monkeypatch, capsys)
    grades = _grades(db, "max_score")
    # A: icontains 0 (w 1), contains 1 (w 3), not-contains 0 (w 0.5): 3 / 4.5; B: 1 + 0 + 0.5 = 1.5 / 4.5.
    # Unweighted B would win (2/3 against 1/3).
    assert [grades[f"test-1-p{i}"][3]["aggregate"] for i in (1, 2)] == [round(3 / 4.5, 6), round(1.5 / 4.5, 6)]
    assert {k: v[:2] for k, v in grades.items()} == {"test-1-p1": (1.0, True), "test-1-p2": (0.0, False)}


@pytest.mark.parametrize(("assertion", "message"), [
    ("{type: assert-set, assert: [{type: select-best, value: funniest}]}", "select-best inside assert-set is not supported"),
    ("{type: select-best, value: funniest, transform: output.trim()}", "a transform on select-best is not supported"),
    ("{type: max-score, value: {weights: {contains: high}}}", "`value.weights` must map assertion types to numbers"),
])
def test_compare_assertions_that_cannot_be_honoured_are_refused(tmp_path: Path, assertion: str, message: str) -> None:
    from eval_pipelines.suite.errors import SpecErrors

    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: [a, b]\nproviders: [openai:chat:m]\ntests:\n  - assert:\n      - {assertion}\n")
    with pytest.raises(SpecErrors) as exc:
        load_suite(config)
    assert message in str(exc.value) and "\n" not in str(exc.value).strip()


def test_select_best_with_one_output_is_an_error_grade_for_it() -> None:
    from eval_pipelines.grading.base import CompareItem, Grade
    from eval_pipelines.grading.graders.select_best import SelectBest, SelectBestParams
    from eval_pipelines.suite.models import Message, TestCase

    inp = GradeInput(case=TestCase(id="t", input=[Message(content="q")]), output="only one")
    (outcome,) = asyncio.run(SelectBest().acompare(SelectBestParams(criteria="best"),
                                                   [CompareItem(("t", "m", 0), inp, list[Grade]())]))
    assert outcome.status == "error" and "at least two outputs" in outcome.reason


# ---- per-assertion `provider`: the assertion's own judge / embedding model ----------------------

# A provider file in promptfoo's shape: a class with callEmbeddingApi; it also checks that no secret
# reaches the sandbox (OPENAI_API_KEY is set in the grading process by these tests).
VECTOR_PROVIDER = """\
class VectorProvider {
  constructor(options) { this.providerId = options.id; }
  id() { return this.providerId; }
  async callApi(prompt) { return { output: JSON.stringify({ score: 0.9, reasoning: 'by file' }) }; }
  async callEmbeddingApi(text) {
    if (process.env.OPENAI_API_KEY) return { error: 'a secret reached the provider' };
    return { embedding: [text.length, text.split(' ').length] };
  }
}
module.exports = VectorProvider;
"""


def test_similar_with_a_javascript_provider_file_embeds_in_the_sandbox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    config = (EXAMPLES / "provider-custom" / "embeddings" / "promptfooconfig.yaml").read_text()
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "customProvider.js").write_text(VECTOR_PROVIDER)
    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = lambda body: "Bonjour le monde"
        db = _run_config(tmp_path, config, server, monkeypatch, capsys)
        assert all("embeddings" not in p for p in server.paths)  # the file embedded, not the server
    ((score, passed, status, details),) = _grades(db, "with_provider").values()
    # promptfoo's matchesSimilarity: cosine of the provider's two embeddings, against threshold 0.25
    a, b = [len("Bonjour le monde"), 3], [len("Greetings earth"), 2]
    cosine = (a[0] * b[0] + a[1] * b[1]) / ((a[0] ** 2 + a[1] ** 2) ** 0.5 * (b[0] ** 2 + b[1] ** 2) ** 0.5)
    assert status == "graded" and passed
    assert details["similarity"] == pytest.approx(cosine, abs=1e-6) and details["threshold"] == 0.25
    assert details["grading_provider"] == "./customProvider.js"


def test_the_real_custom_provider_file_fails_without_network_or_key_as_an_error_grade(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite, _ = load_suite(EXAMPLES / "provider-custom" / "embeddings" / "promptfooconfig.yaml")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    case = suite.tests[0]

    async def go():
        return await agrade_output(case.assertions[0], GradeInput(
            case=case, output="Bonjour le monde", suite_dir=EXAMPLES / "provider-custom" / "embeddings"))
    grade = asyncio.run(go())
    # Its callEmbeddingApi fetches api.openai.com: the sandbox has no network and no key.
    assert grade.status == "error" and "provider ./customProvider.js" in grade.reason
    assert "sk-must-not-leak" not in json.dumps(grade.details) + grade.reason


def test_openai_embedding_and_chat_providers_grade_in_place_of_the_suite_judge(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = lambda body: json.dumps({"score": 0.3, "reasoning": "weak"})
        config = tmp_path / "promptfooconfig.yaml"
        config.write_text(
            "prompts: ['{{q}}']\nproviders: [openai:chat:m]\ntests:\n  - vars: {q: hi}\n    assert:\n"
            f"      - type: similar\n        value: hello\n        threshold: 0.1\n"
            f"        provider: {{id: 'openai:embedding:my-embedder', config: {{apiBaseUrl: '{server.base_url}'}}}}\n"
            f"      - type: llm-rubric\n        value: is polite\n"
            f"        provider: {{id: 'openai:chat:my-grader', config: {{apiBaseUrl: '{server.base_url}'}}}}\n")
        suite, _ = load_suite(config)
        case = suite.tests[0]

        async def go():
            return [await agrade_output(a, GradeInput(case=case, output="hello there", suite_dir=tmp_path), i)
                    for i, a in enumerate(case.assertions)]
        similar, rubric = asyncio.run(go())  # no suite judge at all: each assertion brings its own
        models = [(path, body.get("model")) for path, body in zip(server.paths, server.requests)]
    assert models[0] == ("/v1/embeddings", "my-embedder")
    assert models[-1] == ("/v1/chat/completions", "my-grader")
    assert similar.status == "graded" and similar.details["embedding_model"] == "my-embedder"
    assert rubric.status == "graded" and not rubric.passed and rubric.details["judge_model"] == "my-grader"
    assert rubric.details["raw_score"] == pytest.approx(0.3)


@pytest.mark.parametrize(("provider", "message"), [
    ("anthropic:messages:claude", "grading provider 'anthropic:messages:claude' is not supported"),
    ("{embedding: anthropic:messages:claude}", "grading provider 'anthropic:messages:claude' is not supported"),
    ("{kind: openai:gpt-4o}", "invalid grading provider"),
    ("./missing.js", "missing.js"),
])
def test_grading_providers_we_cannot_honour_are_refused(tmp_path: Path, provider: str, message: str) -> None:
    from eval_pipelines.suite.errors import SpecErrors

    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: [a]\nproviders: [openai:chat:m]\ntests:\n  - assert:\n"
                      f"      - {{type: similar, value: x, provider: {provider}}}\n")
    with pytest.raises(SpecErrors) as exc:
        load_suite(config)
    assert message in str(exc.value)


# ---- assertScoringFunction: the test's score and verdict from a function ------------------------

SCORING_CONFIG = """\
prompts: ['Translate to {{language}}: {{text}}']
providers: [openai:chat:fake-model]
defaultTest:
  assertScoringFunction: file://./default.js
  assert:
    - {type: icontains, value: bonjour, metric: accuracy}
    - {type: contains, value: le, metric: fluency}
    - {type: contains, value: zzz, metric: fluency}
tests:
  - vars: {language: French, text: Hello}
  - vars: {language: French, text: Hi}
    assertScoringFunction: file://./override.py:calculate_score
  - vars: {language: French, text: Hey}
    assertScoringFunction: file://./bad.js
"""


def test_assert_scoring_function_replaces_the_test_score_and_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from eval_pipelines.store.connection import connect

    folder = tmp_path / "suite"
    folder.mkdir()
    for name in ("default.js", "override.py"):  # the example's own functions
        (folder / name).write_bytes((EXAMPLES / "assertion-scoring-override" / name).read_bytes())
    (folder / "bad.js").write_text("module.exports = () => { throw new Error('boom'); };\n")
    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = lambda body: "Bonjour le monde"
        db = _run_config(tmp_path, SCORING_CONFIG, server, monkeypatch, capsys)
    with connect(db) as con:
        results = {r[0]: (r[1], r[2]) for r in con.execute("SELECT test_id, verdict, score FROM test_results").fetchall()}
    grades = _grades(db, "scoring_function")
    # named scores: accuracy 1 (icontains passes), fluency 0.5 (one of its two contains passes)
    assert grades["test-1"][3]["named_scores"] == {"accuracy": 1.0, "fluency": 0.5}
    # default.js: geometric mean sqrt(1 * 0.5) = 0.7071 >= its threshold 0.7: the test passes, although
    # one assertion failed (without the function promptfoo's rule would fail it)
    assert results["test-1"][0] == "pass" and results["test-1"][1] == pytest.approx(0.5 ** 0.5)
    # override.py: min(accuracy * 2, 1) = 1
    assert results["test-2"] == ("pass", pytest.approx(1.0))
    # a function that throws: promptfoo fails the test with score 0
    assert results["test-3"] == ("fail", 0.0)
    assert grades["test-3"][3]["pass"] is False
    assert "Scoring function error: boom" in _reasons(db)["test-3"]


def _reasons(db: Path) -> dict[str, str]:
    from eval_pipelines.store.connection import connect

    with connect(db) as con:
        return dict(con.execute("SELECT test_id, reason FROM grades WHERE assertion_type = 'scoring_function'"
                                ).fetchall())


def test_an_openai_grading_provider_without_key_or_url_is_an_error_not_the_local_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: [a]\nproviders: [openai:chat:m]\ntests:\n  - assert:\n"
                      "      - {type: similar, value: x, provider: 'openai:embedding:text-embedding-3-large'}\n")
    suite, _ = load_suite(config)
    case = suite.tests[0]
    grade = asyncio.run(agrade_output(case.assertions[0], GradeInput(case=case, output="x", suite_dir=tmp_path)))
    assert grade.status == "error" and "OPENAI_API_KEY" in grade.reason
