"""Tools and agents: canned tools, the tool-calling loop of ``OpenAITarget``, the
trace it records for ``tool_trajectory`` / ``execution_metrics``, and the
``tools`` / ``max_steps`` fields of the eval YAML."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import eval_pipelines.run.targets.openai_compat as openai_compat
from eval_pipelines.grading.scoring import grade_outputs
from eval_pipelines.run.engine import _request, run_model_phase
from eval_pipelines.grading.base import GradeInput, Measurements
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.models import (
    Assertion, CannedResult, Message, Suite, TestCase, ToolSpec, merge_tools,
)
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.run.targets.openai_compat import OpenAITarget
from eval_pipelines.run.targets.tools import (
    NO_CANNED_RESULT, arguments_match, call_tool, canned_result, openai_tools, parse_arguments,
)
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.timeout(120)  # a hang guard, generous for a loaded machine


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "BACKOFF_BASE_S", 0.01)


SEARCH = ToolSpec(
    name="search_entity_list",
    description="Search the restricted-party lists for an entity",
    parameters={"type": "object", "properties": {"entity": {"type": "string"}}, "required": ["entity"]},
    results=[
        CannedResult(when={"entity": "Huawei"}, result={"matches": [{"list": "Entity List", "name": "Huawei"}]}),
    ],
    result={"matches": []},
)
REGULATIONS = ToolSpec(
    name="check_regulations",
    description="Look up the export rules for a destination",
    parameters={"type": "object", "properties": {"country": {"type": "string"}}},
    result={"license_required": True, "rule": "EAR 744.11"},
)


def _config(**overrides: Any) -> OpenAITargetConfig:
    settings: dict[str, Any] = {"name": "agent", "model": "m", "max_retries": 2, "timeout_s": 5,
                                "price_input_per_million": 1.0, "price_output_per_million": 2.0}
    settings.update(overrides)
    return OpenAITargetConfig(**settings)


def _tool_request(tools: list[ToolSpec], *, max_steps: int = 8, text: str = "Screen: Huawei") -> TargetRequest:
    return TargetRequest(test_id="screen", trial=0, system_prompt="You screen exports.",
                         messages=[Message(content=text)], timeout_s=5, tools=tools, max_steps=max_steps)


def _generate(server: FakeOpenAIServer, request: TargetRequest, **config: Any) -> ModelOutput:
    async def main() -> ModelOutput:
        target = OpenAITarget(_config(**config), api_key="sk-test", base_url=server.base_url)
        try:
            return await target.generate(request)
        finally:
            await target.aclose()

    return asyncio.run(main())


def _calls(*calls: tuple[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


# -- canned results (pure) -------------------------------------------------------------


def test_canned_result_when_match_default_and_none() -> None:
    assert canned_result(SEARCH, {"entity": "Huawei", "fuzzy": True}) == {
        "matches": [{"list": "Entity List", "name": "Huawei"}]}
    assert canned_result(SEARCH, {"entity": "Acme"}) == {"matches": []}
    bare = ToolSpec(name="t", results=[CannedResult(when={"a": 1}, result="one"),
                                       CannedResult(when={"a": 1, "b": 2}, result="never: first wins")])
    assert canned_result(bare, {"a": 1, "b": 2}) == "one"
    assert canned_result(bare, {"a": 2}) == NO_CANNED_RESULT
    assert canned_result(ToolSpec(name="t", result=[1, 2]), {}) == [1, 2]
    # An empty `when` matches every call.
    assert canned_result(ToolSpec(name="t", results=[CannedResult(result=0)]), {"x": 1}) == 0


def test_arguments_match_is_a_typed_subset() -> None:
    assert arguments_match({}, {"a": 1})
    assert arguments_match({"a": 1}, {"a": 1.0, "b": 2})
    assert not arguments_match({"a": 1}, {"a": True})
    assert not arguments_match({"a": 1}, {"b": 1})
    assert arguments_match({"a": {"k": [1, "x"]}}, {"a": {"k": [1, "x"]}})
    assert not arguments_match({"a": {"k": [1]}}, {"a": {"k": [1], "extra": 0}})


def test_parse_arguments_and_call_tool_never_raise() -> None:
    assert parse_arguments('{"entity": "Huawei"}') == ({"entity": "Huawei"}, None)
    assert parse_arguments("") == ({}, None)
    args, problem = parse_arguments("{entity: Huawei")
    assert args == {"_raw": "{entity: Huawei"} and problem and "not valid JSON" in problem
    args, problem = parse_arguments("[1, 2]")
    assert args == {"_raw": "[1, 2]"} and problem and "JSON object" in problem

    tools = {t.name: t for t in (SEARCH, REGULATIONS)}
    assert call_tool(tools, "check_regulations", '{"country": "CN"}')[1]["rule"] == "EAR 744.11"
    args, result = call_tool(tools, "check_regulations", "not json")
    assert args == {"_raw": "not json"} and "not valid JSON" in result["error"]
    _, result = call_tool(tools, "delete_everything", "{}")
    assert "unknown tool" in result["error"] and "search_entity_list" in result["error"]


def test_openai_tools_shape_and_merge() -> None:
    assert openai_tools([REGULATIONS]) == [{"type": "function", "function": {
        "name": "check_regulations", "description": "Look up the export rules for a destination",
        "parameters": REGULATIONS.parameters}}]
    override = ToolSpec(name="check_regulations", result="overridden")
    merged = merge_tools([SEARCH, REGULATIONS], [override])
    assert [t.result for t in merged] == [SEARCH.result, "overridden"]
    assert merge_tools([SEARCH, REGULATIONS], merged) == merged  # idempotent


def test_tool_spec_validation() -> None:
    with pytest.raises(ValidationError, match="pattern"):
        ToolSpec(name="has space")
    with pytest.raises(ValidationError, match="invalid JSON Schema"):
        ToolSpec(name="t", parameters={"type": "object", "properties": {"x": {"type": "integr"}}})
    with pytest.raises(ValidationError, match="type: object"):
        ToolSpec(name="t", parameters={"type": "string"})
    with pytest.raises(ValidationError, match="duplicate tool name"):
        TestCase(id="x", input=[Message(content="hi")], tools=[SEARCH, SEARCH])


# -- the tool-calling loop -------------------------------------------------------------------


def test_two_tool_trajectory_recorded_and_graded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script = [
        _calls(("search_entity_list", {"entity": "Huawei"})),
        _calls(("check_regulations", {"country": "CN"})),
        "Huawei is on the Entity List: a license is required (EAR 744.11).",
    ]
    out = _generate(fake_openai, _tool_request([SEARCH, REGULATIONS]))

    assert out.error is None
    assert out.output == "Huawei is on the Entity List: a license is required (EAR 744.11)."
    assert [(t["tool"], t["args"], t["result"], t["step"]) for t in out.trace] == [
        ("search_entity_list", {"entity": "Huawei"}, {"matches": [{"list": "Entity List", "name": "Huawei"}]}, 1),
        ("check_regulations", {"country": "CN"}, {"license_required": True, "rule": "EAR 744.11"}, 2),
    ]
    assert not any("stopped" in t for t in out.trace)
    assert (out.llm_calls, out.tool_calls, out.attempts) == (3, 2, 3)

    # What the server saw: the tools on every request, then the tool results fed back.
    assert fake_openai.request_count == 3
    for body in fake_openai.requests:
        assert [t["function"]["name"] for t in body["tools"]] == ["search_entity_list", "check_regulations"]
        assert body["tools"][0]["type"] == "function"
        assert body["tools"][0]["function"]["parameters"]["required"] == ["entity"]
    last = fake_openai.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert last[2]["tool_calls"][0]["function"] == {"name": "search_entity_list",
                                                    "arguments": '{"entity": "Huawei"}'}
    assert last[3]["tool_call_id"] == last[2]["tool_calls"][0]["id"] == out.trace[0]["call_id"]
    assert json.loads(last[3]["content"]) == {"matches": [{"list": "Entity List", "name": "Huawei"}]}
    assert json.loads(last[5]["content"])["rule"] == "EAR 744.11"

    # Usage summed over the three calls (the fake counts words).
    bodies = fake_openai.requests
    assert out.prompt_tokens is not None and out.prompt_tokens > 0
    assert out.completion_tokens is not None and out.completion_tokens > 10
    assert out.cost_usd == pytest.approx((out.prompt_tokens * 1.0 + out.completion_tokens * 2.0) / 1_000_000)
    single_prompt = len(" ".join(str(m.get("content") or "") for m in bodies[0]["messages"]).split())
    assert out.prompt_tokens > single_prompt
    assert out.latency_ms is not None and out.latency_ms > 0

    case = TestCase(id="screen", input=[Message(content="Screen: Huawei")])
    inp = GradeInput(case=case, output=out.output, trace=out.trace,
                     measurements=Measurements(llm_calls=out.llm_calls, tool_calls=out.tool_calls))
    in_order = grade_output(Assertion(type="tool_trajectory", config={"mode": "in_order", "expected": [
        {"tool": "search_entity_list", "args": {"entity": "Huawei"}},
        {"tool": "check_regulations", "args": {"country": "CN"}},
    ]}), inp)
    assert in_order.passed and in_order.score == 1.0
    reversed_order = grade_output(Assertion(type="tool_trajectory", config={"mode": "exact", "expected": [
        {"tool": "check_regulations"}, {"tool": "search_entity_list"}]}), inp)
    assert not reversed_order.passed
    budget = grade_output(Assertion(type="execution_metrics", config={"max_tool_calls": 1}), inp)
    assert not budget.passed and "tool_calls 2 > 1" in budget.reason
    assert grade_output(Assertion(type="execution_metrics", config={"max_llm_calls": 3}), inp).passed


def test_parallel_calls_in_one_step_keep_their_order(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script = [
        _calls(("search_entity_list", {"entity": "Acme"}), ("search_entity_list", {"entity": "Huawei"})),
        "done",
    ]
    out = _generate(fake_openai, _tool_request([SEARCH]))
    assert out.output == "done"
    assert [(t["args"]["entity"], t["step"]) for t in out.trace] == [("Acme", 1), ("Huawei", 1)]
    assert out.trace[0]["result"] == {"matches": []}
    assert (out.llm_calls, out.tool_calls) == (2, 2)
    messages = fake_openai.requests[-1]["messages"]
    assert [m["role"] for m in messages[2:]] == ["assistant", "tool", "tool"]


def test_max_steps_reached_stops_without_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.responder = lambda body: {"content": "still looking",
                                          "tool_calls": [{"name": "search_entity_list",
                                                          "arguments": {"entity": "Huawei"}}]}
    out = _generate(fake_openai, _tool_request([SEARCH], max_steps=3))

    assert out.error is None
    assert out.output == "still looking"
    assert fake_openai.request_count == 3
    assert (out.llm_calls, out.tool_calls) == (3, 3)
    assert [t["step"] for t in out.trace] == [1, 2, 3]
    assert out.trace[-1]["stopped"] == "max_steps"
    assert all("stopped" not in t for t in out.trace[:-1])


def test_max_steps_with_no_text_gives_empty_output(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.responder = lambda body: _calls(("check_regulations", {}))
    out = _generate(fake_openai, _tool_request([REGULATIONS], max_steps=1))
    assert out.error is None and out.output == ""
    assert out.trace == [{"tool": "check_regulations", "args": {}, "result": REGULATIONS.result, "step": 1,
                          "call_id": out.trace[0]["call_id"], "stopped": "max_steps"}]


def test_invalid_json_arguments_become_an_error_result(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script = [
        _calls(("search_entity_list", "{entity: Huawei")),  # a string is sent verbatim
        _calls(("no_such_tool", {"x": 1})),
        "gave up",
    ]
    out = _generate(fake_openai, _tool_request([SEARCH]))

    assert out.error is None and out.output == "gave up"
    first, second = out.trace
    assert first["tool"] == "search_entity_list"
    assert first["args"] == {"_raw": "{entity: Huawei"}
    assert "not valid JSON" in first["result"]["error"]
    assert second["tool"] == "no_such_tool" and "unknown tool" in second["result"]["error"]
    sent = fake_openai.requests[1]["messages"]
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == "{entity: Huawei"
    assert "not valid JSON" in json.loads(sent[3]["content"])["error"]


def test_api_failure_mid_loop_keeps_partial_trace(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script = [_calls(("search_entity_list", {"entity": "Huawei"})), "never sent"]
    fake_openai.plan("ok", "500", "500")
    out = _generate(fake_openai, _tool_request([SEARCH, REGULATIONS]), max_retries=1)

    assert out.output is None
    assert out.error is not None
    assert "step 2" in out.error and "HTTP 500" in out.error and "2 attempt" in out.error
    assert [t["tool"] for t in out.trace] == ["search_entity_list"]
    assert (out.llm_calls, out.attempts, out.tool_calls) == (2, 3, 1)
    assert out.prompt_tokens is not None and out.cost_usd is not None  # the first call was paid for


def test_retry_inside_the_loop_counts_attempts_not_llm_calls(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script = [_calls(("check_regulations", {"country": "CN"})), "ok then"]
    fake_openai.plan("ok", "503")
    out = _generate(fake_openai, _tool_request([REGULATIONS]))
    assert out.error is None and out.output == "ok then"
    assert (out.llm_calls, out.attempts, out.tool_calls) == (2, 3, 1)


def test_request_without_tools_is_unchanged(fake_openai: FakeOpenAIServer) -> None:
    out = _generate(fake_openai, _tool_request([], text="plain"))
    assert out.output == "plain" and out.trace == [] and out.tool_calls == 0
    assert "tools" not in fake_openai.requests[0]


# -- the eval YAML ------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _load_errors(file: Path) -> list:
    with pytest.raises(SpecErrors) as info:
        load_suite(file)
    return info.value.errors


SUITE_WITH_TOOLS = """
    name: export-agent
    description: Screens exports with tools
    execution:
      targets: [agent]
    max_steps: 4
    tools:
      - name: search_entity_list
        description: Search the restricted-party lists
        parameters:
          type: object
          properties:
            entity: {type: string}
          required: [entity]
        results:
          - when: {entity: Huawei}
            result: {matches: [Entity List]}
        result: {matches: []}
      - name: check_regulations
        description: Export rules for a country
        parameters:
          type: object
          properties:
            country: {type: string}
        result: {license_required: true}
    tests:
      - id: default-tools
        input: "Screen: Huawei"
        assert:
          - type: tool_trajectory
            mode: in_order
            expected:
              - tool: search_entity_list
                args: {entity: Huawei}
              - tool: check_regulations
          - type: contains
            value: license
          - type: execution_metrics
            max_tool_calls: 2
      - id: override
        input: "Screen: Acme"
        max_steps: 2
        tools:
          - name: check_regulations
            description: Always says no licence is needed
            result: {license_required: false}
          - name: lookup_country
            result: CN
"""


def test_loader_suite_tools_default_and_test_override(tmp_path: Path) -> None:
    suite, warnings = load_suite(_write(tmp_path / "eval.yaml", SUITE_WITH_TOOLS))
    assert warnings == []
    assert [t.name for t in suite.tools] == ["search_entity_list", "check_regulations"]
    assert suite.max_steps == 4
    default, override = suite.tests
    assert [t.name for t in default.tools] == ["search_entity_list", "check_regulations"]
    assert default.max_steps == 4
    assert default.tools[0].results[0].when == {"entity": "Huawei"}
    assert default.tools[0].parameters["required"] == ["entity"]
    assert [t.name for t in override.tools] == ["search_entity_list", "check_regulations", "lookup_country"]
    assert override.tools[1].result == {"license_required": False}
    assert override.tools[1].parameters == {"type": "object", "properties": {}}
    assert override.max_steps == 2

    request = _request(suite, override, 0)
    assert [t.name for t in request.tools] == ["search_entity_list", "check_regulations", "lookup_country"]
    assert request.tools[1].result == {"license_required": False}
    assert request.max_steps == 2
    assert _request(suite, default, 0).max_steps == 4
    # A suite built in code, without the loader: _request merges and defaults to 8 steps.
    bare = Suite(name="s", format="eval-yaml", source_file="x", tools=[SEARCH],
                 tests=[TestCase(id="a", input=[Message(content="hi")], tools=[REGULATIONS])])
    built = _request(bare, bare.tests[0], 0)
    assert [t.name for t in built.tools] == ["search_entity_list", "check_regulations"]
    assert built.max_steps == 8


def test_loader_invalid_parameters_schema_has_a_line(tmp_path: Path) -> None:
    f = _write(tmp_path / "eval.yaml", """
        tests:
          - id: t
            input: hi
            tools:
              - name: search
                parameters:
                  type: object
                  properties:
                    limit:
                      type: integr
    """)
    errors = _load_errors(f)
    assert len(errors) == 1
    error = errors[0]
    assert error.path == ("tests", 0, "tools", 0, "parameters", "properties", "limit", "type")
    assert error.line == 10
    assert "invalid JSON Schema" in error.message
    assert str(error).startswith(f"{f}:10: tests[0].tools[0].parameters.properties.limit.type:")


def test_loader_reports_tool_problems(tmp_path: Path) -> None:
    f = _write(tmp_path / "eval.yaml", """
        tools:
          - name: search
          - name: search
        max_steps: 0
        tests:
          - id: t
            input: hi
            max_steps: many
            tools:
              - name: "bad name!"
              - name: ok
                parameters: {type: string}
              - name: ok2
                reslt: 1
                results:
                  - when: [entity]
                    result: 1
                  - when: {a: 1}
    """)
    errors = _load_errors(f)
    by_path = {e.path: e for e in errors}
    assert len(by_path) == len(errors)
    assert "duplicate tool name 'search'" in by_path[("tools", 1, "name")].message
    assert by_path[("tools", 1, "name")].line == 3
    assert by_path[("max_steps",)].line == 4
    assert by_path[("tests", 0, "max_steps")].line == 8
    assert "invalid tool name" in by_path[("tests", 0, "tools", 0, "name")].message
    assert "type: object" in by_path[("tests", 0, "tools", 1, "parameters", "type")].message
    assert "did you mean 'result'" in by_path[("tests", 0, "tools", 2, "reslt")].message
    assert by_path[("tests", 0, "tools", 2, "results", 0, "when")].line == 16
    assert by_path[("tests", 0, "tools", 2, "results", 1, "result")].message == "required field is missing"
    assert len(by_path) == 8


def test_loader_duplicate_tool_names_in_a_test(tmp_path: Path) -> None:
    f = _write(tmp_path / "eval.yaml", """
        tests:
          - id: t
            input: hi
            tools:
              - {name: lookup, result: 1}
              - {name: lookup, result: 2}
    """)
    (error,) = _load_errors(f)
    assert error.path == ("tests", 0, "tools", 1, "name")
    assert error.line == 6
    assert "duplicate tool name 'lookup'" in error.message and "tools[0]" in error.message


# -- end to end through the engine ---------------------------------------------------------


def test_run_model_phase_with_tools_from_yaml(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    suite, _ = load_suite(_write(tmp_path / "eval.yaml", SUITE_WITH_TOOLS))

    def responder(body: dict[str, Any]) -> Any:
        messages = body["messages"]
        user = next(m["content"] for m in messages if m["role"] == "user")
        done = [m for m in messages if m["role"] == "tool"]
        names = [t["function"]["name"] for t in body.get("tools", [])]
        if user == "Screen: Huawei":
            if not done:
                return _calls(("search_entity_list", {"entity": "Huawei"}))
            if len(done) == 1:
                return _calls(("check_regulations", {"country": "CN"}))
            return f"Listed; license required: {json.loads(done[-1]['content'])['license_required']}"
        # The override test keeps asking for lookup_country until max_steps (2) stops it.
        assert "lookup_country" in names
        return _calls(("lookup_country", {}))

    fake_openai.responder = responder
    configs = {"agent": _config(name="agent")}
    outputs = asyncio.run(run_model_phase(suite, configs, tmp_path, {"OPENAI_BASE_URL": fake_openai.base_url}))

    by_id = {o.test_id: o for o in outputs}
    first, second = by_id["default-tools"], by_id["override"]
    assert first.error is None and first.output == "Listed; license required: True"
    assert [t["tool"] for t in first.trace] == ["search_entity_list", "check_regulations"]
    assert first.trace[0]["result"] == {"matches": ["Entity List"]}
    assert (first.llm_calls, first.tool_calls) == (3, 2)
    assert second.error is None and second.output == ""
    assert [t["result"] for t in second.trace] == ["CN", "CN"]
    assert second.trace[-1]["stopped"] == "max_steps"
    assert second.llm_calls == 2

    graded = {g.output.test_id: g for g in grade_outputs(suite, outputs)}
    grades = {g.assertion_type: g for g in graded["default-tools"].grades}
    assert grades["tool_trajectory"].passed
    assert grades["contains"].passed
    assert grades["execution_metrics"].passed
