"""promptfoo's ``options.storeOutputAs`` and a prompt that does not render, as promptfoo 0.121 runs
them (src/evaluator.ts runEvalInternal: ``Object.assign(vars, registers)`` before rendering, the
transformed output stored when truthy, concurrency 1; src/evaluatorHelpers.ts renderPrompt inside
the eval's try: a prompt Nunjucks cannot parse fails that eval only)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest

from eval_pipelines.formats.loader import load_suite
from eval_pipelines.run.registers import in_run_order
from eval_pipelines.suite.models import Message, TestCase
from eval_pipelines.suite.registers import Registers, register_mark, with_registers
from tests.support.fake_openai import FakeOpenAIServer

# Two providers, and a second prompt promptfoo cannot render (`{{"a": 1}}`: "expected variable end").
CONFIG = """\
prompts: ['Q: {{ message }}', 'bad {{"a": 1}} {{ message }}']
providers: [openai:gpt-4o-mini, {id: openai:gpt-4o, label: big}]
tests:
  - vars: {message: first}
    options: {storeOutputAs: fruit, transform: "output.split(' ')[0]"}
  - vars: {message: 'why {{fruit}}?'}
    assert: [{type: contains, value: 'Q: why {{fruit}}'}]
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from eval_pipelines.cli import main

    root = tmp_path_factory.mktemp("store")
    (root / "promptfooconfig.yaml").write_text(CONFIG)
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    with FakeOpenAIServer(latency_s=0.0) as server:
        # each model answers "<model> <the last user message>": the stored output says which eval stored it
        server.responder = lambda body: f"{body['model']} {body['messages'][-1]['content']}"
        os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
        try:
            code = main(["run", str(root / "promptfooconfig.yaml"), "--db", str(root / "r.duckdb"), "--no-cache",
                         "--concurrency", "4"])
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        requests = [(b["model"], b["messages"][-1]["content"]) for b in server.requests if b]
    with duckdb.connect(str(root / "r.duckdb"), read_only=True) as con:
        outputs = con.execute("SELECT test_id, target, output, error FROM model_outputs ORDER BY ALL").fetchall()
        grades = con.execute("SELECT test_id, target, passed, reason FROM grades ORDER BY ALL").fetchall()
    return {"code": code, "requests": requests, "outputs": outputs, "grades": grades, "root": root}


@pytest.mark.slow
def test_later_tests_read_the_last_stored_output_in_promptfoos_order(run: dict[str, Any]) -> None:
    # promptfoo's order: test 1 on mini then big, then test 2; the registers are shared by the
    # providers, so test 2 reads what test 1 stored last (big's), on both providers.
    assert run["requests"] == [("gpt-4o-mini", "Q: first"), ("gpt-4o", "Q: first"),
                               ("gpt-4o-mini", "Q: why gpt-4o?"), ("gpt-4o", "Q: why gpt-4o?")]


@pytest.mark.slow
def test_assertion_values_see_the_register_when_graded_from_the_stored_outputs(run: dict[str, Any]) -> None:
    test2 = [g for g in run["grades"] if g[0] == "test-2-p1"]
    assert [g[2] for g in test2] == [True, True], test2


@pytest.mark.slow
def test_a_prompt_that_does_not_parse_fails_only_its_own_cases(run: dict[str, Any]) -> None:
    failed = [o for o in run["outputs"] if o[0].endswith("-p2")]
    assert len(failed) == 4 and all(o[2] is None for o in failed)
    assert {o[3] for o in failed} == {"prompt 'prompt-2' does not render: template does not "
                                      "parse (line 1 of the template): expected token 'end of print statement', "
                                      "got ':' (promptfoo fails this eval too)"}
    assert all(o[3] is None for o in run["outputs"] if o[0].endswith("-p1"))  # the other prompt ran


def test_the_unparsable_prompt_is_a_stored_warning_and_the_cases_keep_it_as_input(tmp_path: Path) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(CONFIG)
    suite, warnings = load_suite(tmp_path / "promptfooconfig.yaml")
    assert any("prompts[1]: template does not parse" in w and "error rows" in w for w in warnings)
    assert any("storeOutputAs" in w and "one at a time" in w for w in warnings)
    bad = next(c for c in suite.tests if c.id == "test-1-p2")
    assert bad.fails_with and bad.input[0].content == 'bad {{"a": 1}} {{ message }}'
    reader = next(c for c in suite.tests if c.id == "test-2-p1")
    assert reader.input[0].content == f"Q: why {register_mark('fruit')}?"
    assert reader.registers is not None and reader.registers.reads == {"fruit": ""}
    writer = next(c for c in suite.tests if c.id == "test-1-p1")
    assert writer.registers.store_as == "fruit" and writer.registers.transforms == ["output.split(' ')[0]"]
    assert writer.input[0].content == "Q: first"  # its later evals get it too, as promptfoo merges them into vars


def _case(case_id: str, order: tuple[int, int, int, int], text: str = "x", **registers: Any) -> TestCase:
    return TestCase(id=case_id, input=[Message(content=text)], registers=Registers(order=order, **registers))


def test_a_register_not_stored_yet_leaves_the_tests_own_value() -> None:
    case = _case("t", (1, 2, 0, 0), f"say {register_mark('x')}", reads={"x": "own"})
    assert with_registers(case, {}).input[0].content == "say own"
    assert with_registers(case, {"x": {"a": 1}}).input[0].content == 'say {"a": 1}'


def test_run_serially_tests_run_first_then_by_test_repeat_combination_provider_prompt() -> None:
    from eval_pipelines.suite.models import Suite

    cases = [_case("a", (1, 1, 0, 1)), _case("b", (0, 2, 0, 0)), _case("c", (1, 1, 0, 0))]
    suite = Suite(name="s", format="promptfoo", source_file="x.yaml", tests=cases)
    suite.execution.targets = ["p", "q"]
    jobs = [(c, t, trial) for c in cases for t in ("p", "q") for trial in (0, 1)]
    order = [(c.id, t, trial) for c, t, trial in in_run_order(suite, jobs)]
    assert order[:2] == [("b", "p", 0), ("b", "q", 0)]
    assert order[4:8] == [("c", "p", 0), ("a", "p", 0), ("c", "q", 0), ("a", "q", 0)]
    assert json.dumps(order[-1]) == json.dumps(["a", "q", 1])
