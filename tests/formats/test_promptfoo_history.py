"""promptfoo's ``_conversation`` variable: later turns are sent with the earlier answers.

promptfoo (src/evaluator.ts ``attachConversationVar`` / ``updateConversationHistory``; the
README of examples/multiple-turn-conversation) fills ``_conversation`` with the turns run
before on the same provider and prompt (and ``metadata.conversationId``), each
``{prompt, input, output}``, where ``output`` is that turn's answer and ``input`` the last
message's content.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.models import Message, Suite, TestCase, output_mark, with_answers
from eval_pipelines.store.connection import connect
from tests.support.fake_openai import last_user_message

CORPUS = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"


def turns(case: TestCase) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in case.input]


def test_promptfoos_multi_turn_example_threads_its_turns_by_conversation_id() -> None:
    # Its prompt.json loops over _conversation with `completion.prompt[completion.prompt.length - 1].content`.
    suite, _ = load_suite(CORPUS / "config-multi-turn" / "promptfooconfig.yaml")
    by_id = {c.id: c for c in suite.tests}
    assert [c.after for c in suite.tests] == [[], ["test-1"], ["test-1", "test-2"], [], ["test-4"], [], ["test-6"]]
    system = ("system", "You are a helpful assistant")
    assert turns(by_id["test-3"]) == [
        system, ("user", "Who founded Facebook?"), ("assistant", output_mark("test-1")),
        ("user", "Where does he live?"), ("assistant", output_mark("test-2")), ("user", "Which state is that in?")]
    assert turns(by_id["test-5"]) == [system, ("user", "What's the weather like in San Francisco?"),
                                      ("assistant", output_mark("test-4")), ("user", "Do I need an umbrella today?")]


def test_the_older_example_renders_as_javascript_would() -> None:
    # examples/multiple-turn-conversation: `completion.input[completion.input.length - 1].content`
    # is the last character's `content` in JavaScript (undefined), so promptfoo sends an empty
    # user message there; the assistant's answers still follow.
    suite, _ = load_suite(CORPUS / "multiple-turn-conversation" / "promptfooconfig.yaml")
    second = suite.tests[1]
    assert second.after == ["test-1"]
    assert turns(second)[1:] == [("user", ""), ("assistant", output_mark("test-1")), ("user", "Where does he live?")]


def test_a_function_prompt_is_given_the_turns(tmp_path: Path) -> None:
    # examples/openai-realtime/realtime-conversation.js reads completion.input and completion.output.
    suite, _ = load_suite(CORPUS / "openai-realtime" / "promptfooconfig-conversation.yaml")
    second = suite.tests[1]
    assert second.after == ["test-1"]
    assert turns(second)[1:] == [("user", "What are some popular tourist destinations in Japan?"),
                                 ("assistant", output_mark("test-1")),
                                 ("user", "Which of those places is best to visit in autumn?")]


def write(folder: Path, body: str) -> Path:
    (folder / "promptfooconfig.yaml").write_text(body)
    return folder / "promptfooconfig.yaml"


TEXT_PROMPT = ("prompts: ['{% for t in _conversation %}Q: {{ t.input }} A: {{ t.output }} | {% endfor %}{{ q }}']\n"
               "providers: [echo]\n")


def test_a_text_prompt_sees_inputs_and_answers_and_without_conversation_id_all_tests_are_one_thread(
        tmp_path: Path) -> None:
    tests = "tests: [{vars: {q: one}}, {vars: {q: two}}, {vars: {q: three}}]\n"
    suite, _ = load_suite(write(tmp_path, TEXT_PROMPT + tests))
    assert [c.after for c in suite.tests] == [[], ["test-1"], ["test-1", "test-2"]]
    one, two = output_mark("test-1"), output_mark("test-2")
    # a text prompt's `input` is its whole rendered text (promptfoo: no JSON chat, so renderedPrompt)
    assert suite.tests[2].input[0].content == f"Q: one A: {one} | Q: Q: one A: {one} | two A: {two} | three"


def test_disable_conversation_var_leaves_the_test_alone(tmp_path: Path) -> None:
    suite, _ = load_suite(write(tmp_path, TEXT_PROMPT + "tests: [{vars: {q: one}}, "
                                "{vars: {q: two}, options: {disableConversationVar: true}}]\n"))
    assert suite.tests[1].after == [] and suite.tests[1].input[0].content == "two"


def test_with_answers_fills_messages_assertions_and_variables() -> None:
    case = TestCase(id="t2", input=[Message(role="assistant", content=output_mark("t1")),
                                    Message(role="user", content="and?")],
                    metadata={"vars": {"_conversation": [{"output": output_mark("t1")}]}}, after=["t1"])
    filled = with_answers(case, {"t1": 'He said "hi"\n\u27e6'})
    assert filled.input[0].content == 'He said "hi"\n\u27e6'
    assert filled.metadata["vars"]["_conversation"][0]["output"] == 'He said "hi"\n\u27e6'
    assert with_answers(case, {"t1": None}).input[0].content == ""  # a failed turn: "" as promptfoo


def test_a_turn_may_only_follow_earlier_tests() -> None:
    with pytest.raises(ValueError, match="not an earlier test"):
        Suite(name="s", format="promptfoo", source_file="x",
              tests=[TestCase(id="a", input=[Message(content="x")], after=["b"]),
                     TestCase(id="b", input=[Message(content="y")])])


def test_run_sends_each_turn_with_the_answers_before_it(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Each answer names the question and how many messages came with it, so the history is checkable.
    fake_openai.responder = lambda body: f"{last_user_message(body)}#{len(body['messages'])}"
    fake_openai.fail_plan = ["400"]  # the first call fails (not retried): its turn's answer is ""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    provider = ("{id: 'openai:chat:fake-model', config: {apiBaseUrl: '" + fake_openai.base_url
                + "', apiKeyEnvar: FAKE_KEY}}")
    (tmp_path / "prompt.json").write_text(
        '[{% for c in _conversation %}{"role": "user", "content": "{{ c.input }}"},'
        '{"role": "assistant", "content": "{{ c.output }}"},{% endfor %}{"role": "user", "content": "{{ q }}"}]')
    write(tmp_path, f"prompts: [file://prompt.json]\nproviders: [{provider}]\n"
                    "evaluateOptions: {repeat: 2, maxConcurrency: 4}\n"
                    "defaultTest: {assert: [{type: javascript, value: \"output.endsWith('#' + (1 + 2 * "
                    "context.vars._conversation.length))\"}]}\n"
                    "tests:\n"
                    "  - {vars: {q: a}, metadata: {conversationId: x}}\n"
                    "  - {vars: {q: b}, metadata: {conversationId: x}}\n"
                    "  - {vars: {q: c}, metadata: {conversationId: x}}\n")
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db)])
    out = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), out
    sent = sorted([(m["role"], m["content"]) for m in body["messages"]]
                  for body in fake_openai.requests if body and "messages" in body)
    # Two trials, each its own conversation; the first call of one of them failed (400).
    assert len(sent) == 6
    thirds = [s for s in sent if len(s) == 5]
    assert len(thirds) == 2
    answers_of_b = {s[3][1] for s in thirds}
    assert answers_of_b == {"b#3"}  # the second turn saw the first turn's answer (or "") and itself
    assert {s[1][1] for s in thirds} == {"a#1", ""}  # one trial's first turn failed: promptfoo's ''
    with connect(db) as con:
        rows = con.execute("SELECT test_id, trial, output, error FROM model_outputs ORDER BY test_id, trial").fetchall()
        assert [r[0] for r in rows] == ["test-1", "test-1", "test-2", "test-2", "test-3", "test-3"]
        assert sum(r[3] is not None for r in rows) == 1
        # the graders saw the filled variables: every answered turn passes the length check
        grades = con.execute("SELECT test_id, passed FROM grades ORDER BY test_id, trial").fetchall()
        assert len(grades) == 5 and all(passed for _, passed in grades), grades
        stored = con.execute("SELECT messages FROM test_cases WHERE test_id = 'test-2'").fetchone()[0]
        assert output_mark("test-1") in stored  # the stored case shows where the answer goes
